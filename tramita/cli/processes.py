"""`tramita serve`, `up` (what `make run` starts) and `scheduler`: the long-running processes."""

from __future__ import annotations

import argparse
import os
from pathlib import Path

from tramita.bootstrap import build_application, build_audit, database_url, system_clock
from tramita.cli.access import cli_actor
from tramita.cli.cases import cmd_migrate, seed_demo_in


def cmd_serve(args: argparse.Namespace) -> int:
    """Create the tables if needed, then serve the API with gunicorn."""
    from tramita.serve import serve

    cmd_migrate(args)
    serve(args.bind, args.workers, config_file=args.config or os.environ.get("TRAMITA_GUNICORN_CONFIG") or None)
    return 0


#: Demo tokens `tramita up` issues (and revokes at its next start): a few bodies of the lifecycle.
DEMO_ROLES = (("demo-assembly-mesa", "assembly-mesa", None), ("demo-tre", "tre", None),
              ("demo-governor", "governor", None), ("demo-auditor", "auditor", None),
              ("demo-mayor-feijo", "mayor", "1200302"))


def cmd_up(args: argparse.Namespace) -> int:
    """`make run`: migrate, seed the demo on an empty database, then the API, the projector and the scheduler."""
    from tramita.side_by_side import run_side_by_side, tramita_command
    from audit.keys import create_signing_key, origin_from

    key_path = os.environ.get("TRAMITA_SIGNING_KEY", "").strip()
    if key_path and not Path(key_path).exists():
        signer = create_signing_key(key_path, origin_from(os.environ))
        print(f"signing key made at {key_path} (mode 0600); verifier key: {signer.verifier}")
    cmd_migrate(args)
    app = build_application()
    seed_demo_in(app)
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

    from infrastructure.store import open_store
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
