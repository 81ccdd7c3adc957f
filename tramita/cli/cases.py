"""`tramita seed-registry`, `seed-demo`, `replay`, `migrate`, `project`, `rebuild`: the cases and their projections."""

from __future__ import annotations

import argparse
import json
import sys
import time
from datetime import date

from domain.alert_words import municipality_words
from domain.words import KIND_NAMES, ROLE_NAMES, STAGE_NAMES
from tramita.bootstrap import build_application, build_projector, database_url
from tramita.cli.language import day, language, say, spoken, tenths


def cmd_seed_demo(args: argparse.Namespace) -> int:
    """The registry, the demo's cases and the illustrative files of the acts of its 1991 case (audit/demo_files.py)."""
    seed_demo_in(build_application(), say=lambda said: print(spoken(said)))
    return 0


def seed_demo_in(app, say=print) -> bool:  # noqa: ANN001
    """Seed the demo into `app`'s store, its documents beside its events (the same database); whether it was
    seeded now (False: it was there already). `say` tells each step."""
    from infrastructure.store import open_store
    from tramita.bootstrap import build_documents
    from audit.demo_files import seed_demo_with_documents

    store = open_store(database_url())
    documents = build_documents(app, store)
    try:
        return seed_demo_with_documents(app, documents, say)
    finally:
        documents.store.close()
        store.close()


def cmd_seed_registry(args: argparse.Namespace) -> int:
    """A real deployment's registry: Acre's municipalities from the shipped seed (figures with their dates and
    sources), no demo case; recorded once, by the operating-system account that runs it."""
    from domain.acts import Actor
    from tramita.cli.access import os_account

    app = build_application()
    seeded = app.seed_registry(Actor(f"os:{os_account()}", "operator"), app.today())
    print(say("registry: %(count)s municipalities seeded", count=len(seeded)) if seeded
          else say("registry: already seeded (nothing recorded)"))
    return 0


def cmd_replay(args: argparse.Namespace) -> int:
    app = build_application(signing=False, read_only=True)
    as_of = date.fromisoformat(args.as_of) if args.as_of else None
    rows = app.timeline(args.case, as_of=as_of)
    case = app.case_as_of(args.case, as_of) if as_of else app.get_case(args.case)
    next_acts = app.next_acts(case, as_of) if case else []
    if args.json:
        print(json.dumps({"case": args.case, "as_of": args.as_of, "stage": case.stage if case else None,
                          "events": rows, "next_acts": next_acts}, default=str, ensure_ascii=False, indent=2))
        return 0
    title = f"{case.number} ({say(KIND_NAMES.get(case.kind, case.kind))})" if case else args.case
    stage = say("stage: %(stage)s", stage=say(STAGE_NAMES.get(case.stage, case.stage))) if case \
        else say("not yet opened")
    print(f"{title}: {stage}" + (" " + say("as of %(day)s", day=day(as_of)) if as_of else ""))
    print(f"{'#':>3}  {say('legal date'):<10}  {say('recorded at (UTC)'):<19}  {say('actor'):<22}  "
          f"{say('article'):<16}  {say('act')}")
    for row in rows:
        actor = row["actor"]["role"] + (f"/{row['actor']['municipality']}" if row["actor"]["municipality"] else "")
        print(f"{row['sequence']:>3}  {day(row['occurred_on']):<10}  {row['recorded_at'][:19]:<19}  {actor:<22}  "
              f"{row['article']:<16}  {row['type'].split('.')[-1]}{_detail(row)}")
    if case is not None:
        heading = say("next acts on %(day)s:", day=day(as_of)) if as_of else say("next acts:")
        print(heading + ("" if next_acts else " " + say("none")))
        for entry in next_acts:
            bodies = ", ".join(say(ROLE_NAMES.get(role, role)) for role in entry["roles"]) + (
                " " + say("of %(municipalities)s", municipalities=", ".join(
                    municipality_words(code, _name(app, code), language().gettext)
                    for code in entry["municipalities"])) if entry["municipalities"] else "")
            print(f"  {entry['act']:<32}  {entry['article']:<16}  {bodies}")
    return 0


def _name(app, code: str) -> str | None:  # noqa: ANN001
    """A municipality's name in the registry (None: not there; its code is shown)."""
    from domain.errors import MunicipalityNotFoundError

    try:
        return app.municipality(code).name
    except MunicipalityNotFoundError:
        return None


def _detail(row: dict) -> str:
    payload = row["payload"]
    if isinstance(payload.get("documents"), list):  # the files attached to an act, by name
        return f" [{', '.join(str(d.get('name')) for d in payload['documents'] if isinstance(d, dict))}]"
    for key in ("deadline", "item", "requisition", "law", "decree", "reason"):
        if key in payload and payload[key]:
            due = payload.get("due_on") if key == "deadline" else None
            extra = " " + say("due %(day)s", day=day(due)) if due else ""
            late = " " + say("(late)") if payload.get("on_time") is False else ""
            return f" [{payload[key]}{extra}{late}]"
    return ""


def cmd_migrate(args: argparse.Namespace) -> int:
    """Create the event store's tables and the projections' tables, once, before any worker starts."""
    projector = build_projector(build_application(create_table=True))
    done = projector.migrate()
    created = ", ".join(done["created"]) or say("none (all present)")
    print(say("migrated: event store ready; projections created: %(names)s", names=created)
          + ("; " + say("rebuilt (their tables changed): %(names)s", names=", ".join(done["rebuilt"]))
             if done["rebuilt"] else ""))
    return 0


def cmd_project(args: argparse.Namespace) -> int:
    """Keep the projections current until SIGTERM or Ctrl-C (the batch in progress commits or rolls back)."""
    import signal
    import threading

    from infrastructure.store import new_events_waiter

    app = build_application()
    projector = build_projector(app, batch_size=args.batch_size)
    if args.once:
        print(say("projected %(count)s notifications; positions %(positions)s", count=projector.catch_up(),
                  positions=projector.positions()))
        report_failures(projector)
        return 0
    stop = threading.Event()
    for signum in (signal.SIGTERM, signal.SIGINT):
        signal.signal(signum, lambda *_: stop.set())
    print(say("projector following the event log from %(positions)s", positions=projector.positions()), flush=True)
    projector.run(stop, poll_seconds=args.poll, wait=new_events_waiter(app, projector.store, stop),
                  log=lambda line: print(line, file=sys.stderr, flush=True))
    print(say("projector stopped at %(positions)s", positions=projector.positions()), flush=True)
    report_failures(projector)
    return 0


def cmd_rebuild(args: argparse.Namespace) -> int:
    """Rebuild projections from the first event beside the live tables, then swap them in."""
    app = build_application()
    names = [args.projection] if args.projection else None
    from projections.projector import REBUILD_BATCH_SIZE

    projector = build_projector(app, names, batch_size=args.batch_size or REBUILD_BATCH_SIZE)
    started = time.monotonic()

    def progress(position: int, total: int) -> None:
        width = 30
        filled = width * position // total if total else width
        rate = position / max(time.monotonic() - started, 1e-9)
        print(f"\r[{'#' * filled}{'.' * (width - filled)}] " + say(
            "%(position)s/%(total)s notifications, %(rate)s/s", position=position, total=total, rate=round(rate)),
            end="", file=sys.stderr, flush=True)

    count = projector.rebuild(progress)
    print(file=sys.stderr)
    print(say("rebuilt %(names)s from %(count)s notifications in %(seconds)s s", names=", ".join(projector.names),
              count=count, seconds=tenths(time.monotonic() - started)))
    report_failures(projector)
    return 0


def report_failures(projector) -> None:  # noqa: ANN001
    """Name on stderr each aggregate the projections could not write (the command still succeeds: every other
    row is current, and each failure has raised its system alert)."""
    failed = projector.failures()
    if failed:
        print("tramita: " + say("%(count)s aggregate(s) could not be projected; their rows stay as of their last "
                                "event before the failure, every other row is current, and each raised a "
                                "projection-failure alert:", count=len(failed)), file=sys.stderr)
    for f in failed:
        print(f"  {f['projection']}: {f['aggregate_kind']} {f['aggregate_id']} " + say(
            "from notification %(notification)s", notification=f["notification_id"])
            + f" ({f['topic']}): {f['error']}", file=sys.stderr)
