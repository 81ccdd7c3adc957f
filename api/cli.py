"""`tramita`: the command line. Each command parses, calls the application, renders; nothing else."""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from collections.abc import Callable, Sequence
from datetime import date, datetime, timezone
from pathlib import Path

DEFAULT_DATABASE_URL = "sqlite:///var/tramita.sqlite"
#: What tramita's processes create is their owner's only: files 0600 (the SQLite database and its -wal and -shm,
#: the scheduler's lock file, any key or secret file), directories 0700.
PRIVATE_UMASK = 0o077
#: The projections `rebuild --projection` accepts (kept here so that `--help` imports nothing heavy).
PROJECTION_NAMES = ("cases", "deadlines", "freezes", "alerts", "municipalities")


def system_clock() -> datetime:
    """The wall clock, read at the edge and passed into the application."""
    return datetime.now(timezone.utc)


def private_files() -> None:
    """From now on this process creates files 0600 and directories 0700 (its umask; existing files keep theirs)."""
    os.umask(PRIVATE_UMASK)


def database_url() -> str:
    return os.environ.get("TRAMITA_DATABASE_URL", DEFAULT_DATABASE_URL)


def build_application(url: str | None = None, *, create_table: bool | None = None,
                      clock: Callable[[], datetime] = system_clock):  # noqa: ANN201
    """The one place where the store, the clock and the statute are wired together.

    Event tables are created by `tramita migrate`; on PostgreSQL no other command creates them (concurrent
    workers creating them race), on SQLite and in memory every command may (one file, one writer).
    """
    from domain.application import Tramita, persistence_env

    url = url or database_url()
    if create_table is None:
        create_table = not url.startswith(("postgresql://", "postgres://"))
    env = persistence_env(url, create_table=create_table)
    if "SQLITE_DBNAME" in env:
        Path(env["SQLITE_DBNAME"]).parent.mkdir(parents=True, exist_ok=True)
    return Tramita(env, clock=clock)


def cmd_seed_demo(args: argparse.Namespace) -> int:
    from domain.demo import seed_demo

    seed_demo(build_application())
    return 0


def cmd_replay(args: argparse.Namespace) -> int:
    app = build_application()
    as_of = date.fromisoformat(args.as_of) if args.as_of else None
    rows = app.timeline(args.case, as_of=as_of)
    case = app.case_as_of(args.case, as_of) if as_of else app.get_case(args.case)
    if args.json:
        print(json.dumps({"case": args.case, "as_of": args.as_of, "stage": case.stage if case else None,
                          "events": rows}, default=str, ensure_ascii=False, indent=2))
        return 0
    title = f"{case.number} ({case.kind})" if case else args.case
    print(f"{title}: stage {case.stage if case else 'not yet opened'}"
          + (f" as of {as_of.isoformat()}" if as_of else ""))
    print(f"{'#':>3}  {'legal date':<10}  {'recorded at (UTC)':<19}  {'actor':<22}  {'article':<16}  act")
    for row in rows:
        actor = row["actor"]["role"] + (f"/{row['actor']['municipality']}" if row["actor"]["municipality"] else "")
        print(f"{row['sequence']:>3}  {row['occurred_on']:<10}  {row['recorded_at'][:19]:<19}  {actor:<22}  "
              f"{row['article']:<16}  {row['type'].split('.')[-1]}{_detail(row)}")
    return 0


def _detail(row: dict) -> str:
    payload = row["payload"]
    for key in ("deadline", "item", "requisition", "law", "decree", "reason"):
        if key in payload and payload[key]:
            extra = f" due {payload['due_on']}" if key == "deadline" and payload.get("due_on") else ""
            late = " (late)" if payload.get("on_time") is False else ""
            return f" [{payload[key]}{extra}{late}]"
    return ""


def cmd_verify(args: argparse.Namespace) -> int:
    app = build_application()
    reports = [app.verify(args.case)] if args.case else app.verify_all()
    bad = [r for r in reports if not r.ok]
    for report in reports if args.case or bad else []:
        verdict = "ok" if report.ok else (f"ALTERED at event {report.first_bad_version} "
                                          f"({report.first_bad_type}): {report.reason}")
        print(f"{report.label}: {report.events} events, {verdict}")
    print(f"verified {len(reports)} chains: {len(reports) - len(bad)} intact, {len(bad)} altered")
    return 1 if bad else 0


def build_projector(app, names: Sequence[str] | None = None, **options):  # noqa: ANN001, ANN201
    from projections.projector import Projector
    from projections.store import open_store

    return Projector(app, open_store(database_url()), names=names, **options)


def cmd_migrate(args: argparse.Namespace) -> int:
    """Create the event store's tables and the projections' tables, once, before any worker starts."""
    projector = build_projector(build_application(create_table=True))
    done = projector.migrate()
    print(f"migrated: event store ready; projections created: {', '.join(done['created']) or 'none (all present)'}"
          + (f"; rebuilt (their tables changed): {', '.join(done['rebuilt'])}" if done["rebuilt"] else ""))
    return 0


def cmd_project(args: argparse.Namespace) -> int:
    """Keep the projections current until SIGTERM or Ctrl-C (the batch in progress commits or rolls back)."""
    import signal
    import threading

    from projections.projector import new_events_waiter

    app = build_application()
    projector = build_projector(app, batch_size=args.batch_size)
    if args.once:
        print(f"projected {projector.catch_up()} notifications; positions {projector.positions()}")
        report_failures(projector)
        return 0
    stop = threading.Event()
    for signum in (signal.SIGTERM, signal.SIGINT):
        signal.signal(signum, lambda *_: stop.set())
    print(f"projector following the event log from {projector.positions()}", flush=True)
    projector.run(stop, poll_seconds=args.poll, wait=new_events_waiter(app, projector.store, stop),
                  log=lambda line: print(line, file=sys.stderr, flush=True))
    print(f"projector stopped at {projector.positions()}", flush=True)
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
        print(f"\r[{'#' * filled}{'.' * (width - filled)}] {position}/{total} notifications, {rate:,.0f}/s",
              end="", file=sys.stderr, flush=True)

    count = projector.rebuild(progress)
    print(file=sys.stderr)
    print(f"rebuilt {', '.join(projector.names)} from {count} notifications in {time.monotonic() - started:.1f}s")
    report_failures(projector)
    return 0


def report_failures(projector) -> None:  # noqa: ANN001
    """Name on stderr each aggregate the projections could not write (the command still succeeds: every other
    row is current, and each failure has raised its system alert)."""
    failed = projector.failures()
    if failed:
        print(f"tramita: {len(failed)} aggregate(s) could not be projected; their rows stay as of their last event "
              "before the failure, every other row is current, and each raised a projection-failure alert:",
              file=sys.stderr)
    for f in failed:
        print(f"  {f['projection']}: {f['aggregate_kind']} {f['aggregate_id']} from notification "
              f"{f['notification_id']} ({f['topic']}): {f['error']}", file=sys.stderr)


def os_account() -> str:
    """The operating-system account this process runs as, from the system's user database (never $USER or
    $LOGNAME, which whoever starts the process sets as they like)."""
    import pwd

    uid = os.geteuid()
    try:
        return pwd.getpwuid(uid).pw_name
    except KeyError:  # an account without a passwd entry (a container's arbitrary uid)
        return f"uid {uid}"


def cli_actor(issuer: str | None = None):  # noqa: ANN201
    """Who runs an administrative command, recorded on the token's events: the operating-system account
    (`os:<account>`), or the person named with --issuer beside it (`<issuer> (os:<account>)`)."""
    import unicodedata

    from domain.acts import Actor

    account = f"os:{os_account()}"
    if issuer is None:
        return Actor(account, "token-administrator")
    name = issuer.strip()
    if not name or any(unicodedata.category(c).startswith("C") for c in name):
        raise ValueError("--issuer: the name of the person issuing, without control or format characters")
    return Actor(f"{name} ({account})", "token-administrator")


def cmd_token_create(args: argparse.Namespace) -> int:
    issued = build_application().issue_token(cli_actor(args.issuer), name=args.name, role=args.role,
                                             municipality=args.municipality)
    print(f"token {issued.id} for {issued.actor.principal} ({issued.actor.role}"
          f"{' of ' + issued.actor.municipality if issued.actor.municipality else ''}); shown this once:")
    print(issued.token)
    return 0


def cmd_token_revoke(args: argparse.Namespace) -> int:
    token = build_application().revoke_token(cli_actor(args.issuer), args.token_id, reason=args.reason)
    print(f"token {token.id} ({token.name}, {token.role}) revoked")
    return 0


def cmd_token_list(args: argparse.Namespace) -> int:
    for token in build_application().tokens():
        state = f"revoked {token.revoked_on}" if token.revoked_on else "active"
        print(f"{token.id}  {token.role:<18}  {token.municipality or '':<7}  {state:<18}  {token.name}")
    return 0


def cmd_serve(args: argparse.Namespace) -> int:
    """Create the tables if needed, then serve the API with gunicorn."""
    from api.serve import serve

    cmd_migrate(args)
    serve(args.bind, args.workers, config_file=args.config or os.environ.get("TRAMITA_GUNICORN_CONFIG") or None)
    return 0


#: Demo tokens `tramita up` issues (and revokes at its next start): a few bodies of the lifecycle.
DEMO_ROLES = (("demo-assembly-mesa", "assembly-mesa", None), ("demo-tre", "tre", None),
              ("demo-governor", "governor", None), ("demo-auditor", "auditor", None),
              ("demo-mayor-feijo", "mayor", "1200302"))


def cmd_up(args: argparse.Namespace) -> int:
    """`make run`: migrate, seed the demo on an empty database, then the API, the projector and the scheduler."""
    from api.serve import run_side_by_side, tramita_command
    from domain.demo import seed_demo

    cmd_migrate(args)
    app = build_application()
    seed_demo(app)
    for token in app.tokens():
        if token.name.startswith("demo-") and token.revoked_on is None:
            app.revoke_token(cli_actor(), str(token.id), reason="replaced by a new `tramita up`")
    issued = [app.issue_token(cli_actor(), name=name, role=role, municipality=code) for name, role, code in DEMO_ROLES]
    app.close()
    url = f"http://{args.bind}"
    print(f"\ntramita API: {url}    docs: {url}/docs    (Ctrl-C stops the API, the projector and the scheduler)")
    print("demo tokens (use as `Authorization: Bearer <token>`):")
    for token in issued:
        print(f"  {token.actor.role:<15} {token.token}")
    print(flush=True)
    return run_side_by_side({
        "api": tramita_command("serve", "--bind", args.bind, "--workers", str(args.workers)),
        "projector": tramita_command("project"),
        "scheduler": tramita_command("scheduler"),
    })


def cmd_scheduler(args: argparse.Namespace) -> int:
    """Raise compliance alerts on statutory deadlines until SIGTERM / Ctrl-C, one leader at a time (scheduler/)."""
    import signal
    import threading

    from projections.store import open_store
    from scheduler import config, leader, service
    from scheduler.jsonlog import json_lines

    url = database_url()
    settings = config.load(os.environ, url, cron=args.cron, thresholds=args.thresholds,
                           poll_leadership=args.poll_leadership)
    stop = threading.Event()
    for signum in (signal.SIGTERM, signal.SIGINT):
        signal.signal(signum, lambda *_: stop.set())
    return service.run(settings, build_application(url), open_store(url), leader.for_database(url), stop=stop,
                       log=json_lines(system_clock), once=args.once)


def parser() -> argparse.ArgumentParser:
    top = argparse.ArgumentParser(prog="tramita", description="Case tracking for LC 35/1991 (Acre). "
                                  "The store is TRAMITA_DATABASE_URL (default sqlite:///var/tramita.sqlite).")
    commands = top.add_subparsers(dest="command", required=True)
    commands.add_parser("seed-demo", help="seed the registry and the four demo cases").set_defaults(run=cmd_seed_demo)
    replay = commands.add_parser("replay", help="a case's timeline, optionally as of a legal date")
    replay.add_argument("case", help="case number (LC35-2026-0001) or id")
    replay.add_argument("--as-of", help="legal date YYYY-MM-DD")
    replay.add_argument("--json", action="store_true", help="print JSON")
    replay.set_defaults(run=cmd_replay)
    verify = commands.add_parser("verify", help="recompute hash chains; exit 1 if any was altered")
    verify.add_argument("case", nargs="?", help="case number or id (default: every chain)")
    verify.set_defaults(run=cmd_verify)
    commands.add_parser("migrate", help="create the event store's and the projections' tables (once)"
                        ).set_defaults(run=cmd_migrate)
    project = commands.add_parser("project", help="keep the projections current (stops on SIGTERM / Ctrl-C)")
    project.add_argument("--once", action="store_true", help="catch up with the log and exit")
    project.add_argument("--batch-size", type=int, default=500, help="notifications per transaction")
    project.add_argument("--poll", type=float, default=0.5, help="seconds between polls when idle")
    project.set_defaults(run=cmd_project)
    rebuild = commands.add_parser("rebuild", help="rebuild projections from the first event, then swap them in")
    rebuild.add_argument("--projection", choices=PROJECTION_NAMES, help="only this projection (default: all)")
    rebuild.add_argument("--batch-size", type=int, help="notifications per transaction (default 5000)")
    rebuild.set_defaults(run=cmd_rebuild)
    token = commands.add_parser("token", help="API bearer tokens: create, revoke, list")
    token_commands = token.add_subparsers(dest="token_command", required=True)
    create = token_commands.add_parser("create", help="issue a token for a competent body (printed once)")
    create.add_argument("--role", required=True, help="governor, deputy, assembly-mesa, ..., auditor")
    create.add_argument("--municipality", help="IBGE code (council, mayor and municipality tokens)")
    create.add_argument("--name", required=True, help="the holder, recorded as the principal of every act")
    create.set_defaults(run=cmd_token_create)
    revoke = token_commands.add_parser("revoke", help="revoke a token by its id")
    revoke.add_argument("token_id")
    revoke.add_argument("--reason", default="revoked by an administrator")
    revoke.set_defaults(run=cmd_token_revoke)
    for command in (create, revoke):
        command.add_argument("--issuer", metavar="NAME", help="who issues or revokes, recorded beside the "
                             "operating-system account (default: the account alone)")
    token_commands.add_parser("list", help="every token issued, active or revoked").set_defaults(run=cmd_token_list)
    serve = commands.add_parser("serve", help="migrate, then serve the API with gunicorn")
    serve.add_argument("--bind", help="HOST:PORT (default 127.0.0.1:8000, or the gunicorn configuration's)")
    serve.add_argument("--workers", type=int, help="gunicorn worker processes (default 2, or the configuration's)")
    serve.add_argument("-c", "--config", metavar="FILE",
                       help="a gunicorn configuration file (default TRAMITA_GUNICORN_CONFIG); GUNICORN_CMD_ARGS "
                            "is read too")
    serve.set_defaults(run=cmd_serve)
    up = commands.add_parser("up", help="migrate, seed the demo, then run the API, projector and scheduler")
    up.add_argument("--bind", default="127.0.0.1:8000")
    up.add_argument("--workers", type=int, default=2)
    up.set_defaults(run=cmd_up)
    scheduler = commands.add_parser("scheduler", help="raise deadline alerts (JSON lines on stdout) until SIGTERM")
    scheduler.add_argument("--once", action="store_true", help="lead, scan once and exit (for cron)")
    scheduler.add_argument("--cron", help="crontab line of the scans (default TRAMITA_SCHEDULER_CRON, */15 * * * *)")
    scheduler.add_argument("--thresholds",
                           help="days before the due day to warn (default TRAMITA_ALERT_THRESHOLDS, 5,1)")
    scheduler.add_argument("--poll-leadership", metavar="SECONDS", help="while another leads, try every (default 5)")
    scheduler.set_defaults(run=cmd_scheduler)
    return top


def main(argv: Sequence[str] | None = None) -> int:
    from domain.errors import CaseNotFoundError, InvalidActError, LegalRuleError, MunicipalityNotFoundError
    from projections.store import NotMigratedError

    private_files()
    args = parser().parse_args(argv)
    try:
        return args.run(args)
    except (CaseNotFoundError, InvalidActError, LegalRuleError, MunicipalityNotFoundError, NotMigratedError,
            ValueError) as error:
        print(f"tramita: {error}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
