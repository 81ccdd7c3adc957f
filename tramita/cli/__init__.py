"""`tramita`: the command line. Each command parses, calls the application, renders; nothing else.

What a person reads is in Portuguese, or English by LANG (tramita/cli/language.py); argparse's own help is English.
The commands live by what they touch: `cases` (seed-registry, seed-demo, replay, migrate, project, rebuild),
`audit` (verify, keys, checkpoint, rebuild-tree), `access` (token), `subscriptions` (subscription),
`statute` (amend, show), `documents` (documents expire),
`processes` (serve, up, scheduler), `witness` (witness keys, witness serve). Importing this module
imports no command's dependencies, so `tramita --help` is quick.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Sequence

from tramita.bootstrap import StoreMissingError, private_files

#: The projections `rebuild --projection` accepts (kept here so that `--help` imports nothing heavy).
PROJECTION_NAMES = ("cases", "deadlines", "freezes", "alerts", "deliveries", "attachments", "municipalities")


def _lazy(module: str, name: str) -> Callable[[argparse.Namespace], int]:
    """The command `name` of `tramita.cli.<module>`, imported when it runs."""
    def run(args: argparse.Namespace) -> int:
        from importlib import import_module

        return getattr(import_module(f"tramita.cli.{module}"), name)(args)

    return run


def installed_version() -> str:
    """The version installed (pyproject.toml's, through the package's metadata); "unknown" outside an install."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("tramita")
    except PackageNotFoundError:
        return "unknown"


def parser() -> argparse.ArgumentParser:
    top = argparse.ArgumentParser(prog="tramita", description="Case tracking for LC 35/1991 (Acre). "
                                  "The store is TRAMITA_DATABASE_URL (default sqlite:///var/tramita.sqlite).")
    top.add_argument("--version", action="version", version=f"tramita {installed_version()}")
    commands = top.add_subparsers(dest="command", required=True)
    commands.add_parser("seed-registry", help="seed the registry alone (Acre's municipalities, no demo case): what "
                        "a real deployment runs once").set_defaults(run=_lazy("cases", "cmd_seed_registry"))
    commands.add_parser("seed-demo", help="seed the registry and the four demo cases").set_defaults(
        run=_lazy("cases", "cmd_seed_demo"))
    replay = commands.add_parser("replay", help="a case's timeline, optionally as of a legal date")
    replay.add_argument("case", help="case number (LC35-2026-0001) or id")
    replay.add_argument("--as-of", help="legal date YYYY-MM-DD")
    replay.add_argument("--json", action="store_true", help="print JSON")
    replay.set_defaults(run=_lazy("cases", "cmd_replay"))
    verify = commands.add_parser("verify", help="verify the store (chains, Merkle tree, checkpoints, signatures) "
                                 "and the read models against the events; exit 1 on tampering")
    verify.add_argument("case", nargs="?", help="case number or id (default: the whole store)")
    verify.add_argument("--checkpoint", action="append", metavar="FILE",
                        help="a checkpoint kept outside the store (a file, or a folder of them); repeatable")
    verify.add_argument("--key", help="the verifier key to trust (or a file holding it); default "
                        "TRAMITA_VERIFIER_KEY, else the signing key's")
    verify.add_argument("--receipt", metavar="FILE", help="check one act's signed receipt against the store")
    verify.add_argument("--all-signatures", action="store_true",
                        help="check every event's signature, also those a checkpoint covers")
    verify.add_argument("--json", action="store_true", help="print the verdict as JSON")
    verify.add_argument("--witness-key", action="append", metavar="VKEY",
                        help="a witness's verifier key (or a file holding it) whose cosignature counts; repeatable")
    verify.add_argument("--quorum", type=int, metavar="N", help="valid cosignatures the latest checkpoint needs "
                        "from the --witness-key witnesses (default: all of them); exit 1 below it")
    verify.add_argument("--no-read-models", action="store_true",
                        help="do not check the read models against the events (the audit log only)")
    verify.set_defaults(run=_lazy("audit", "cmd_verify"))
    keys = commands.add_parser("keys", help="the signing key of the log (TRAMITA_SIGNING_KEY)")
    keys_commands = keys.add_subparsers(dest="keys_command", required=True)
    init = keys_commands.add_parser("init", help="make the Ed25519 signing key (file created 0600)")
    init.add_argument("--origin", help="the log's origin, the key's name (default TRAMITA_LOG_ORIGIN, "
                      "else localhost/tramita)")
    init.set_defaults(run=_lazy("audit", "cmd_keys_init"))
    keys_commands.add_parser("show", help="print the verifier key").set_defaults(run=_lazy("audit", "cmd_keys_show"))
    commands.add_parser("checkpoint", help="sign a checkpoint of the log now and print it (exit 1: tamper alarm)"
                        ).set_defaults(run=_lazy("audit", "cmd_checkpoint"))
    commands.add_parser("rebuild-tree", help="rebuild the audit log's stored tree from the events, keeping the "
                        "checkpoints").set_defaults(run=_lazy("audit", "cmd_rebuild_tree"))
    commands.add_parser("migrate", help="create the event store's and the projections' tables (once)"
                        ).set_defaults(run=_lazy("cases", "cmd_migrate"))
    project = commands.add_parser("project", help="keep the projections current (stops on SIGTERM / Ctrl-C)")
    project.add_argument("--once", action="store_true", help="catch up with the log and exit")
    project.add_argument("--batch-size", type=int, default=500, help="notifications per transaction")
    project.add_argument("--poll", type=float, default=0.5, help="seconds between polls when idle")
    project.set_defaults(run=_lazy("cases", "cmd_project"))
    rebuild = commands.add_parser("rebuild", help="rebuild projections from the first event, then swap them in")
    rebuild.add_argument("--projection", choices=PROJECTION_NAMES, help="only this projection (default: all)")
    rebuild.add_argument("--batch-size", type=int, help="notifications per transaction (default 5000)")
    rebuild.set_defaults(run=_lazy("cases", "cmd_rebuild"))
    token = commands.add_parser("token", help="API bearer tokens: create, revoke, list")
    token_commands = token.add_subparsers(dest="token_command", required=True)
    create = token_commands.add_parser("create", help="issue a token for a competent body (printed once)")
    create.add_argument("--role", required=True, help="governor, deputy, assembly-mesa, ..., auditor")
    create.add_argument("--municipality", help="IBGE code (council, mayor and municipality tokens)")
    create.add_argument("--name", required=True, help="the holder, recorded as the principal of every act")
    create.add_argument("--expires", metavar="YYYY-MM-DD", help="the token's last valid day (default: valid until "
                        "revoked)")
    create.set_defaults(run=_lazy("access", "cmd_token_create"))
    revoke = token_commands.add_parser("revoke", help="revoke a token by its id")
    revoke.add_argument("token_id")
    revoke.add_argument("--reason", default="revoked by an administrator")
    revoke.set_defaults(run=_lazy("access", "cmd_token_revoke"))
    for command in (create, revoke):
        command.add_argument("--issuer", metavar="NAME", help="who issues or revokes, recorded beside the "
                             "operating-system account (default: the account alone)")
    token_commands.add_parser("list", help="every token issued, active or revoked").set_defaults(
        run=_lazy("access", "cmd_token_list"))
    subscription = commands.add_parser("subscription", help="a body's alerts to its webhook, or its deadlines as a "
                                       "calendar: add, list, remove")
    subscription_commands = subscription.add_subparsers(dest="subscription_command", required=True)
    add = subscription_commands.add_parser("add", help="subscribe a webhook (or --calendar, a feed); its secret "
                                           "(or the feed's address) is printed once")
    add.add_argument("--url", help="the webhook's http(s) address")
    add.add_argument("--calendar", action="store_true", help="a calendar feed (.ics) of open deadlines instead")
    add.add_argument("--role", help="who must act (default: every body)")
    add.add_argument("--municipality", help="IBGE code: only its alerts or deadlines")
    add.add_argument("--case", help="case number or id: only its alerts or deadlines")
    add.add_argument("--kind", action="append", help="only this alert kind (missed, breach, due-in-N-days); "
                     "repeatable")
    add.add_argument("--issuer", help="the person adding it, recorded beside the operating-system account")
    add.set_defaults(run=_lazy("subscriptions", "cmd_subscription_add"))
    remove = subscription_commands.add_parser("remove", help="end a subscription by its id")
    remove.add_argument("subscription_id")
    remove.add_argument("--reason", default="removed by an operator", help="why (recorded)")
    remove.add_argument("--issuer", help="the person removing it")
    remove.set_defaults(run=_lazy("subscriptions", "cmd_subscription_remove"))
    subscription_commands.add_parser("list", help="every subscription, active or removed").set_defaults(
        run=_lazy("subscriptions", "cmd_subscription_list"))
    documents = commands.add_parser("documents", help="the documents acts cite: expire")
    documents_commands = documents.add_subparsers(dest="documents_command", required=True)
    expire = documents_commands.add_parser("expire", help="remove the documents no act cited within "
                                           "TRAMITA_DOCUMENT_EXPIRY_DAYS of their last upload (recorded as alerts)")
    expire.add_argument("--days", type=int, help="the expiry in days (default TRAMITA_DOCUMENT_EXPIRY_DAYS, 7)")
    expire.set_defaults(run=_lazy("documents", "cmd_documents_expire"))
    statute = commands.add_parser("statute", help="the statute's parameters and their amendments")
    statute_commands = statute.add_subparsers(dest="statute_command", required=True)
    amend = statute_commands.add_parser("amend", help="record a law that amends the statute, described in a TOML "
                                        "file (law, published_on, [sources], [[parameter]])")
    amend.add_argument("file", help="the amendment's TOML file (docs/law/amendments.md)")
    amend.set_defaults(run=_lazy("statute", "cmd_statute_amend"))
    show = statute_commands.add_parser("show", help="the parameters in force on a day")
    show.add_argument("--on", metavar="YYYY-MM-DD", help="the day (default: today in Rio Branco)")
    show.add_argument("--parameter", help="one parameter only")
    show.add_argument("--json", action="store_true", help="print JSON, with every version's history")
    show.set_defaults(run=_lazy("statute", "cmd_statute_show"))
    serve = commands.add_parser("serve", help="migrate, then serve the API with gunicorn")
    serve.add_argument("--bind", help="HOST:PORT (default 127.0.0.1:8000, or the gunicorn configuration's)")
    serve.add_argument("--workers", type=int, help="gunicorn worker processes (default 2, or the configuration's)")
    serve.add_argument("-c", "--config", metavar="FILE",
                       help="a gunicorn configuration file (default TRAMITA_GUNICORN_CONFIG); GUNICORN_CMD_ARGS "
                            "is read too")
    serve.set_defaults(run=_lazy("processes", "cmd_serve"))
    up = commands.add_parser("up", help="migrate, seed the demo, then run the API, projector and scheduler")
    up.add_argument("--bind", default="127.0.0.1:8000")
    up.add_argument("--workers", type=int, default=2)
    up.set_defaults(run=_lazy("processes", "cmd_up"))
    witness = commands.add_parser("witness", help="the witness that cosigns the log's checkpoints (C2SP "
                                     "tlog-witness)")
    witness_commands = witness.add_subparsers(dest="witness_command", required=True)
    witness_keys = witness_commands.add_parser("keys", help="the witness's key (TRAMITA_WITNESS_KEY)")
    witness_key_commands = witness_keys.add_subparsers(dest="witness_keys_command", required=True)
    witness_init = witness_key_commands.add_parser("init", help="make the witness's Ed25519 key (file created 0600)")
    witness_init.add_argument("--name", help="the witness's name (default TRAMITA_WITNESS_NAME or "
                              "localhost/tramita-witness)")
    witness_init.set_defaults(run=_lazy("witness", "cmd_witness_keys_init"))
    witness_key_commands.add_parser("show", help="print the witness's verifier key").set_defaults(
        run=_lazy("witness", "cmd_witness_keys_show"))
    witness_serve = witness_commands.add_parser("serve", help="serve add-checkpoint on the witness's own store "
                                                "(TRAMITA_WITNESS_DATABASE_URL)")
    witness_serve.add_argument("--bind", default="127.0.0.1:8090", help="HOST:PORT (default 127.0.0.1:8090)")
    witness_serve.add_argument("--log-key", action="append", required=True, metavar="VKEY",
                               help="the verifier key of a log it witnesses (or a file holding it); repeatable")
    witness_serve.set_defaults(run=_lazy("witness", "cmd_witness_serve"))
    witness_commands.add_parser("refused", help="the checkpoints it refused (log-signed evidence), as JSON lines"
                                ).set_defaults(run=_lazy("witness", "cmd_witness_refused"))
    scheduler = commands.add_parser("scheduler", help="raise deadline alerts (JSON lines on stdout) until SIGTERM")
    scheduler.add_argument("--once", action="store_true", help="lead, scan once and exit (for cron)")
    scheduler.add_argument("--cron", help="crontab line of the scans (default TRAMITA_SCHEDULER_CRON, */15 * * * *)")
    scheduler.add_argument("--thresholds",
                           help="days before the due day to warn (default TRAMITA_ALERT_THRESHOLDS, 5,1)")
    scheduler.add_argument("--poll-leadership", metavar="SECONDS", help="while another leads, try every (default 5)")
    scheduler.set_defaults(run=_lazy("processes", "cmd_scheduler"))
    return top


def main(argv: Sequence[str] | None = None) -> int:
    from audit.keys import SigningKeyError
    from audit.service import NotSignedError
    from audit.verify import StoreEmptyError
    from domain.application.subscriptions import SubscriptionNotFoundError, SubscriptionsOffError
    from domain.errors import CaseNotFoundError, InvalidActError, LegalRuleError, MunicipalityNotFoundError
    from projections.batch import TrackingConflict
    from infrastructure.store import NotMigratedError

    from tramita.cli.language import say, told

    private_files()
    args = parser().parse_args(argv)
    try:
        return args.run(args)
    except (CaseNotFoundError, InvalidActError, LegalRuleError, MunicipalityNotFoundError, NotMigratedError,
            SigningKeyError, NotSignedError, StoreEmptyError, StoreMissingError, SubscriptionNotFoundError,
            SubscriptionsOffError, TrackingConflict, ValueError) as error:
        print(f"tramita: {told(error)}", file=sys.stderr)
        return 2
    except Exception as error:
        if not _is_database_error(error):
            raise
        print("tramita: " + say("cannot read the store (%(kind)s: %(error)s)", kind=type(error).__name__,
                                error=str(error).strip().splitlines()[0]), file=sys.stderr)
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
