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
                      clock: Callable[[], datetime] = system_clock, signing: bool = True,
                      read_only: bool = False):  # noqa: ANN201
    """The one place where the store, the clock, the statute and the signing key are wired together.

    Event tables are created by `tramita migrate`; on PostgreSQL no other command creates them (concurrent
    workers creating them race), on SQLite and in memory every command may (one file, one writer). With
    `read_only` nothing is created: a SQLite file that does not exist is refused (StoreMissingError). With
    `signing`, the key `TRAMITA_SIGNING_KEY` names (if set) signs every event stored.
    """
    from audit.keys import signer_from
    from domain.application import Tramita, persistence_env

    url = url or database_url()
    if create_table is None:
        create_table = not url.startswith(("postgresql://", "postgres://")) and not read_only
    env = persistence_env(url, create_table=create_table)
    if "SQLITE_DBNAME" in env:
        path = Path(env["SQLITE_DBNAME"])
        if read_only and not path.is_file():
            raise StoreMissingError(f"TRAMITA_DATABASE_URL: there is no database at {path} (nothing was created)")
        if not read_only:
            path.parent.mkdir(parents=True, exist_ok=True)
    elif read_only and env["PERSISTENCE_MODULE"] == "eventsourcing.popo":
        raise StoreMissingError("TRAMITA_DATABASE_URL: memory:// holds nothing outside the process that made it")
    return Tramita(env, clock=clock, signer=signer_from(os.environ) if signing else None)


class StoreMissingError(Exception):
    """A read-only command was pointed at a store that does not exist."""


def build_audit(app, store, *, key: str | None = None):  # noqa: ANN001, ANN201
    """The audit service over an application and its database: the tree, the signer, the trusted verifier key
    (`key`, else TRAMITA_VERIFIER_KEY, else the signing key's), the witnesses (TRAMITA_WITNESS_DIR/_URL)."""
    from audit.keys import trusted_verifier
    from audit.log import AuditLog
    from audit.service import Audit
    from audit.witness import witnesses_from

    return Audit(app, AuditLog(app, store), app.signer, trusted_verifier(os.environ, key, app.signer),
                 witnesses_from(os.environ))


def cmd_seed_demo(args: argparse.Namespace) -> int:
    from domain.demo import seed_demo

    seed_demo(build_application())
    return 0


def cmd_replay(args: argparse.Namespace) -> int:
    app = build_application(signing=False, read_only=True)
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
    """Verify the store (read only): chains, the tree against every checkpoint, signatures; exit 1 on tampering."""
    from audit import report
    from projections.store import open_store

    url = database_url()
    app = build_application(url, signing=False, read_only=True)
    audit = build_audit(app, open_store(url), key=args.key)
    if args.receipt:
        problems = audit.check_receipt(report.read_receipt(args.receipt))
        print(report.receipt_verdict(args.receipt, problems))
        return 1 if problems else 0
    if args.case:
        checked = audit.verify_case(args.case)
        print(report.case_verdict(checked))
        return 0 if checked["ok"] else 1
    verdict = audit.verify(external=report.read_checkpoints(args.checkpoint or []),
                           all_signatures=args.all_signatures)
    print(json.dumps(verdict.as_dict(), ensure_ascii=False, indent=2) if args.json else report.store_verdict(verdict))
    return 0 if verdict.ok else 1


def cmd_keys_init(args: argparse.Namespace) -> int:
    """Make the deployment's Ed25519 signing key (0600), named after the log's origin."""
    from audit.keys import create_signing_key, origin_from

    path = os.environ.get("TRAMITA_SIGNING_KEY", "").strip()
    if not path:
        raise ValueError("TRAMITA_SIGNING_KEY: set it to the path of the key file to create (outside the database)")
    signer = create_signing_key(path, args.origin or origin_from(os.environ))
    print(f"signing key written to {path} (mode 0600). The verifier key, for auditors and witnesses:")
    print(signer.verifier)
    return 0


def cmd_keys_show(args: argparse.Namespace) -> int:
    """Print the verifier key of the deployment's signing key."""
    from audit.keys import signer_from

    signer = signer_from(os.environ)
    if signer is None:
        raise ValueError("TRAMITA_SIGNING_KEY is not set: there is no signing key to show")
    print(signer.verifier)
    return 0


def cmd_rebuild_tree(args: argparse.Namespace) -> int:
    """Rebuild the audit log's stored tree from the events (after a TREE finding), keeping the checkpoints."""
    from audit.log import AuditLog
    from projections.store import open_store

    url = database_url()
    app = build_application(url, signing=False, read_only=True)
    appended = AuditLog(app, open_store(url)).rebuild_tree()
    print(f"the audit log's tree was rebuilt from the {appended} stored events; the checkpoints are kept (the next "
          "`tramita checkpoint` checks the tree against them)")
    return 0


def cmd_checkpoint(args: argparse.Namespace) -> int:
    """Sign a checkpoint of the log as it now stands and print it; refuse (exit 1) when it contradicts one
    signed before."""
    from audit.log import TamperAlarm
    from projections.store import open_store

    url = database_url()
    app = build_application(url, read_only=True)
    audit = build_audit(app, open_store(url))
    try:
        signed = audit.sign_checkpoint(lambda event, **fields: print(json.dumps({"event": event, **fields}),
                                                                     file=sys.stderr))
    except TamperAlarm as alarm:
        print("tramita: TAMPER ALARM: the log refuses to sign a checkpoint:", file=sys.stderr)
        for finding in alarm.findings:
            print(f"  - {finding}", file=sys.stderr)
        return 1
    if not signed.new:
        print(f"the log has not grown since the checkpoint of size {signed.checkpoint.size} "
              f"(signed {signed.checkpoint.signed_at}):", file=sys.stderr)
    print(signed.checkpoint.note, end="")
    return 0


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
    for token in build_application(signing=False, read_only=True).tokens():
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
    from audit.keys import create_signing_key, origin_from
    from domain.demo import seed_demo

    key_path = os.environ.get("TRAMITA_SIGNING_KEY", "").strip()
    if key_path and not Path(key_path).exists():
        signer = create_signing_key(key_path, origin_from(os.environ))
        print(f"signing key made at {key_path} (mode 0600); verifier key: {signer.verifier}")
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
    if app.signer is not None:
        print(f"audit log signed by {app.signer.verifier} (GET {url}/checkpoints/key); checkpoints hourly"
              + (f", copied to {os.environ['TRAMITA_WITNESS_DIR']}" if os.environ.get("TRAMITA_WITNESS_DIR") else ""))
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
    app, store = build_application(url), open_store(url)
    return service.run(settings, app, store, leader.for_database(url), stop=stop, log=json_lines(system_clock),
                       once=args.once, audit=build_audit(app, store))


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
    verify = commands.add_parser("verify", help="verify the store (chains, Merkle tree, checkpoints, signatures); "
                                 "exit 1 on tampering")
    verify.add_argument("case", nargs="?", help="case number or id (default: the whole store)")
    verify.add_argument("--checkpoint", action="append", metavar="FILE",
                        help="a checkpoint kept outside the store (a file, or a folder of them); repeatable")
    verify.add_argument("--key", help="the verifier key to trust (or a file holding it); default "
                        "TRAMITA_VERIFIER_KEY, else the signing key's")
    verify.add_argument("--receipt", metavar="FILE", help="check one act's signed receipt against the store")
    verify.add_argument("--all-signatures", action="store_true",
                        help="check every event's signature, also those a checkpoint covers")
    verify.add_argument("--json", action="store_true", help="print the verdict as JSON")
    verify.set_defaults(run=cmd_verify)
    keys = commands.add_parser("keys", help="the signing key of the log (TRAMITA_SIGNING_KEY)")
    keys_commands = keys.add_subparsers(dest="keys_command", required=True)
    init = keys_commands.add_parser("init", help="make the Ed25519 signing key (file created 0600)")
    init.add_argument("--origin", help="the log's origin, the key's name (default TRAMITA_LOG_ORIGIN, "
                      "else localhost/tramita)")
    init.set_defaults(run=cmd_keys_init)
    keys_commands.add_parser("show", help="print the verifier key").set_defaults(run=cmd_keys_show)
    commands.add_parser("checkpoint", help="sign a checkpoint of the log now and print it (exit 1: tamper alarm)"
                        ).set_defaults(run=cmd_checkpoint)
    commands.add_parser("rebuild-tree", help="rebuild the audit log's stored tree from the events, keeping the "
                        "checkpoints").set_defaults(run=cmd_rebuild_tree)
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
    from audit.keys import SigningKeyError
    from audit.service import NotSignedError
    from audit.verify import StoreEmptyError
    from domain.errors import CaseNotFoundError, InvalidActError, LegalRuleError, MunicipalityNotFoundError
    from projections.store import NotMigratedError

    private_files()
    args = parser().parse_args(argv)
    try:
        return args.run(args)
    except (CaseNotFoundError, InvalidActError, LegalRuleError, MunicipalityNotFoundError, NotMigratedError,
            SigningKeyError, NotSignedError, StoreEmptyError, StoreMissingError, ValueError) as error:
        print(f"tramita: {error}", file=sys.stderr)
        return 2
    except Exception as error:
        if not _is_database_error(error):
            raise
        print(f"tramita: cannot read the store ({type(error).__name__}: {str(error).strip().splitlines()[0]})",
              file=sys.stderr)
        return 2


def _is_database_error(error: BaseException) -> bool:
    """The database is unreachable, or is not a tramita store (no tables): said plainly, not as a traceback."""
    import sqlite3

    from eventsourcing.persistence import PersistenceError

    kinds: tuple[type[BaseException], ...] = (sqlite3.Error, PersistenceError)
    try:
        import psycopg

        kinds += (psycopg.Error,)
    except ImportError:
        pass
    return isinstance(error, kinds)


if __name__ == "__main__":
    sys.exit(main())
