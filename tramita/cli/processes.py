"""`tramita serve`, `up` (what `make run` starts) and `scheduler`: the long-running processes."""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from domain.errors import AuthenticationError
from tramita.bootstrap import build_application, build_audit, database_url, private_files, system_clock
from tramita.cli.access import cli_actor
from tramita.cli.cases import cmd_migrate, seed_demo_in
from tramita.cli.language import say


def cmd_serve(args: argparse.Namespace) -> int:
    """Create the tables if needed, then serve the API with gunicorn."""
    from tramita.serve import serve

    cmd_migrate(args)
    serve(args.bind, args.workers, config_file=args.config or os.environ.get("TRAMITA_GUNICORN_CONFIG") or None)
    return 0


#: Demo tokens `tramita up` issues once and keeps in DEMO_TOKENS_FILE: a few bodies of the lifecycle.
DEMO_ROLES = (("demo-assembly-mesa", "assembly-mesa", None), ("demo-tre", "tre", None),
              ("demo-governor", "governor", None), ("demo-auditor", "auditor", None),
              ("demo-mayor-feijo", "mayor", "1200302"))
#: Where `tramita up` keeps the demo's tokens between starts (0600): a newcomer's saved commands keep working.
DEMO_TOKENS_FILE = "TRAMITA_DEMO_TOKENS_FILE"


def cmd_up(args: argparse.Namespace) -> int:
    """`make run`: migrate, seed the demo on an empty database, then the API, the projector and the scheduler; the
    address and the demo tokens are printed last, once the API answers."""
    from tramita.side_by_side import port_taken, run_side_by_side, tramita_command
    from audit.keys import create_signing_key, origin_from

    host, _, port = args.bind.rpartition(":")
    taken = port_taken(host.strip("[]"), port)
    if taken:
        print("tramita up: " + say("cannot serve on %(host)s:%(port)s (%(taken)s): choose another port with "
                                   "`make run PORT=8080` (or `tramita up --bind %(host)s:8080`), or stop the program "
                                   "using %(port)s.", host=host, port=port, taken=taken), file=sys.stderr)
        return 1
    key_path = os.environ.get("TRAMITA_SIGNING_KEY", "").strip()
    if key_path and not Path(key_path).exists():
        signer = create_signing_key(key_path, origin_from(os.environ))
        print(say("signing key made at %(path)s (mode 0600); verifier key: %(key)s", path=key_path,
                  key=signer.verifier))
    with contextlib.redirect_stdout(io.StringIO()):  # the demo's story is `tramita seed-demo`'s to tell
        cmd_migrate(args)
    os.environ.setdefault("TRAMITA_PUBLIC_URL", f"http://{args.bind}")  # the mails' and feeds' links
    mail = demo_mail()  # first: the application reads the subscription key it may make
    app = build_application()
    seeded = seed_demo_in(app, say=lambda line: None)
    tokens = demo_tokens(app, Path(os.environ.get(DEMO_TOKENS_FILE) or "var/demo-tokens.json"))
    if seeded:  # the demo's alerts, raised by the scheduler's first scan, land in the maildir for a newcomer to read
        app.subscribe(cli_actor(), token_id=None, channel="email", email=DEMO_INBOX)
    verifier = app.signer.verifier if app.signer is not None else None
    app.close()
    url = f"http://{args.bind}"

    def ready() -> None:
        print(("\n" + say("demo seeded: four cases (tramita seed-demo tells their story)") if seeded else "") +
              "\n" + say("tramita API: %(url)s    docs: %(url)s/docs    (Ctrl-C stops the API, the projector and "
                         "the scheduler)", url=url))
        if verifier is not None:
            witnessed = os.environ.get("TRAMITA_WITNESS_DIR")
            print(say("audit log signed by %(key)s (GET %(url)s/checkpoints/key); checkpoints hourly", key=verifier,
                      url=url) + (", " + say("copied to %(folder)s", folder=witnessed) if witnessed else ""))
        print(say("demo tokens (use as `Authorization: Bearer <token>`; kept across restarts in %(path)s):",
                  path=str(tokens.path)))
        for role, token in tokens.issued:
            print(f"  {role:<15} {token}")
        print(say("subscriptions and calendar feeds on (POST %(url)s/subscriptions, POST %(url)s/feeds; key kept in "
                  "%(path)s)", url=url, path=mail.key_path))
        print(say("alerts by e-mail: %(where)s", where=mail.where)
              + ("; " + say("every demo alert goes to %(address)s", address=DEMO_INBOX) if seeded else ""))
        print(flush=True)

    return run_side_by_side({
        "api": tramita_command("serve", "--bind", args.bind, "--workers", str(args.workers)),
        "projector": tramita_command("project"),
        "scheduler": tramita_command("scheduler"),
    }, ready=(f"{url}/health", ready))


#: The address the demo subscribes to every alert when it seeds (an operator's subscription), read in the maildir.
DEMO_INBOX = "demo@tramita.example.org"
#: Where `tramita up` keeps the demo's subscription key (0600) when TRAMITA_SUBSCRIPTION_KEY is not set.
DEMO_SUBSCRIPTION_KEY_FILE = "var/subscription-key"


@dataclass
class DemoMail:
    key_path: str
    """Where the subscription key the processes were given is kept (or the variable that gave it)."""
    where: str
    """Where the e-mail subscriptions' alerts go, in words."""


def demo_mail(environ: Any = os.environ, key_file: Path = Path(DEMO_SUBSCRIPTION_KEY_FILE)) -> DemoMail:
    """Subscriptions and feeds on for the demo: a subscription key made once and kept in `key_file` (0600) unless
    TRAMITA_SUBSCRIPTION_KEY is set, given to the processes through the environment; with no TRAMITA_SMTP_URL the
    scheduler writes the alerts' mails to the maildir TRAMITA_MAILDIR (default var/mail)."""
    import base64
    import secrets

    from domain.subscriptions import parse_key

    source = "TRAMITA_SUBSCRIPTION_KEY"
    if not (environ.get("TRAMITA_SUBSCRIPTION_KEY") or "").strip():
        try:
            key = key_file.read_text(encoding="utf-8").strip()
            parse_key(key, str(key_file))
        except (OSError, ValueError):
            key = base64.b64encode(secrets.token_bytes(32)).decode()
            key_file.parent.mkdir(parents=True, exist_ok=True)
            private_files()
            key_file.unlink(missing_ok=True)  # written anew, so created 0600 whatever mode an older copy had
            key_file.write_text(key + "\n", encoding="utf-8")
        environ["TRAMITA_SUBSCRIPTION_KEY"] = key
        source = str(key_file)
    if (environ.get("TRAMITA_SMTP_URL") or "").strip():
        where = say("sent through %(url)s", url=environ["TRAMITA_SMTP_URL"])
    else:
        maildir = (environ.get("TRAMITA_MAILDIR") or "").strip() or "var/mail"
        environ["TRAMITA_MAILDIR"] = maildir
        where = say("no TRAMITA_SMTP_URL, so written to the maildir %(folder)s/new (one file per message)",
                    folder=maildir)
    return DemoMail(source, where)


@dataclass
class DemoTokens:
    path: Path
    issued: list[tuple[str, str]]
    """(role, token) of each demo body."""


def demo_tokens(app: Any, path: Path) -> DemoTokens:
    """The demo's tokens: those kept in `path` while the store still accepts every one of them; otherwise the demo
    tokens of the store are revoked, new ones issued and kept (0600)."""
    try:
        kept = json.loads(path.read_text(encoding="utf-8"))
        issued = [(str(entry["role"]), str(entry["token"])) for entry in kept]
        if len(issued) == len(DEMO_ROLES) and all(app.actor_for(token)[0].role == role for role, token in issued):
            return DemoTokens(path, issued)
    except (OSError, ValueError, TypeError, KeyError, AuthenticationError):
        pass  # none kept, unreadable, or no longer valid in this store: issued again below
    for token in app.tokens():
        if token.name.startswith("demo-") and token.revoked_on is None:
            app.revoke_token(cli_actor(), str(token.id), reason="replaced by a new `tramita up`")
    fresh = [app.issue_token(cli_actor(), name=name, role=role, municipality=code) for name, role, code in DEMO_ROLES]
    issued = [(token.actor.role, token.token) for token in fresh]
    path.parent.mkdir(parents=True, exist_ok=True)
    private_files()
    path.unlink(missing_ok=True)  # written anew, so created 0600 whatever mode an older copy had
    path.write_text(json.dumps([{"role": role, "token": token} for role, token in issued], indent=1) + "\n",
                    encoding="utf-8")
    return DemoTokens(path, issued)


def mailed_in_portuguese(settings: Any) -> Any:
    """The scheduler's settings with the alerts' e-mails worded by the pages' Portuguese catalogue, whole numbers
    as Babel writes them in pt-BR."""
    from dataclasses import replace

    from babel.numbers import format_decimal

    from api.i18n import compiled_catalogue

    return replace(settings, mail=replace(settings.mail, gettext=compiled_catalogue("pt_BR").gettext,
                                          number=lambda value: format_decimal(value, locale="pt_BR")))


def alerts_in_portuguese(app: Any, settings: Any) -> Any:
    """How the scheduler says its alerts beside their codes (the webhook's body and the log line): the e-mails'
    Portuguese catalogue, the registry's names of the municipalities, whole numbers as Babel writes them in pt-BR.
    Alerts are sent in Portuguese whatever the operator's LANG: their readers are the bodies, not the operator."""
    from scheduler.jsonlog import Wording

    return Wording.of(app, settings.mail.gettext, number=settings.mail.number)


def cmd_scheduler(args: argparse.Namespace) -> int:
    """Raise compliance alerts on statutory deadlines until SIGTERM / Ctrl-C, one leader at a time (scheduler/)."""
    import signal
    import threading

    from infrastructure.store import open_store
    from scheduler import config, leader, service
    from scheduler.jsonlog import json_lines

    url = database_url()
    settings = config.load(os.environ, url, cron=args.cron, thresholds=args.thresholds,
                           poll_leadership=args.poll_leadership)
    settings = mailed_in_portuguese(settings)
    stop = threading.Event()
    for signum in (signal.SIGTERM, signal.SIGINT):
        signal.signal(signum, lambda *_: stop.set())
    app, store = build_application(url), open_store(url)
    return service.run(settings, app, store, leader.for_database(url), stop=stop, log=json_lines(system_clock),
                       once=args.once, audit=build_audit(app, store), wording=alerts_in_portuguese(app, settings))
