"""A checkpointing scheduler killed with SIGKILL while it signs loses no checkpoint and doubles none: after a
restart the checkpoints stay strictly monotonic, each is consistent with the one before, every witness holds
every one, and `tramita verify` finds the store intact (SQLite and PostgreSQL)."""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tramita.cli import main
from audit import merkle
from audit.keys import load_signing_key
from audit.log import AuditLog
from audit.notes import open_checkpoint
from domain.acts import Actor
from infrastructure.store import open_store
from tests.stores import make_app

REPO = Path(__file__).resolve().parent.parent
ADMIN = Actor("admin", "token-administrator")
#: Generous: a loaded 2-core machine still starts the process and reaches its signing within this.
DEADLINE_SECONDS = 120


def scheduler(env: dict[str, str], *args: str) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "tramita", "scheduler", "--poll-leadership", "0.1",
                             "--cron", "0 0 1 1 *", *args], cwd=REPO, env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)


def killed_while_signing(env: dict[str, str], pause: float) -> list[dict]:
    """Start a scheduler, SIGKILL it `pause` seconds after it says it is signing; the lines it wrote."""
    process = scheduler(env)
    lines: list[dict] = []
    started = time.monotonic()
    try:
        for line in process.stdout:  # blocks until the next line: no polling, no fixed wait
            lines.append(json.loads(line))
            if lines[-1]["event"] == "checkpoint-signing":
                time.sleep(pause)  # where in the signing the kill lands: varied on purpose
                process.send_signal(signal.SIGKILL)
                break
            assert time.monotonic() - started < DEADLINE_SECONDS, lines
    finally:
        if process.poll() is None:
            process.kill()
        process.wait(timeout=DEADLINE_SECONDS)
    assert any(line["event"] == "checkpoint-signing" for line in lines), (lines, process.stderr.read())
    return lines


@pytest.mark.slow
def test_a_scheduler_killed_while_signing_loses_and_doubles_no_checkpoint(database_url, tmp_path, monkeypatch,
                                                                         capsys):
    key, witness = tmp_path / "signing.key", tmp_path / "witness"
    env = {**os.environ, "TRAMITA_DATABASE_URL": database_url, "TRAMITA_SIGNING_KEY": str(key),
           "TRAMITA_LOG_ORIGIN": "tramita.test/acre", "TRAMITA_WITNESS_DIR": str(witness),
           "TRAMITA_CHECKPOINT_CRON": "0 0 1 1 *", "PYTHONPATH": str(REPO)}
    for name in ("TRAMITA_ALERT_WEBHOOK_URL", "TRAMITA_WITNESS_URL", "TRAMITA_VERIFIER_KEY"):
        env.pop(name, None)
        monkeypatch.delenv(name, raising=False)
    for name in ("TRAMITA_DATABASE_URL", "TRAMITA_SIGNING_KEY", "TRAMITA_LOG_ORIGIN", "TRAMITA_WITNESS_DIR"):
        monkeypatch.setenv(name, env[name])
    assert main(["keys", "init"]) == 0 and main(["migrate"]) == 0
    signer = load_signing_key(key)
    app = make_app(database_url, signer=signer)
    rounds, chosen = random.Random(1991), []
    for round_ in range(6):
        for n in range(40):  # events to append and check while signing
            issued = app.issue_token(ADMIN, name=f"clerk {round_}-{n}", role="tre")
            app.revoke_token(ADMIN, str(issued.id), reason="rotated")
        pause = rounds.choice((0.0, 0.005, 0.02, 0.05, 0.2))
        chosen.append(pause)
        killed_while_signing(env, pause)
    finished = scheduler(env, "--once")
    out, err = finished.communicate(timeout=DEADLINE_SECONDS)
    assert finished.returncode == 0, err
    final = [json.loads(line) for line in out.splitlines() if '"checkpoint"' in line]
    assert final and final[-1]["size"] == app.recorder.max_notification_id()

    log = AuditLog(app, open_store(database_url))
    checkpoints = log.checkpoints()
    sizes = [c.size for c in checkpoints]
    assert sizes == sorted(set(sizes)) and len(sizes) >= 2, (sizes, chosen)  # strictly monotonic, none twice
    parsed = [open_checkpoint(c.note, signer.verifier) for c in checkpoints]
    for before, after in zip(parsed, parsed[1:]):
        merkle.verify_consistency(before.size, after.size, before.root, after.root,
                                  log.consistency(before.size, after.size))
    held = {int(f.name.split(".")[0]): f.read_text(encoding="utf-8") for f in witness.glob("*.checkpoint")}
    # a checkpoint committed just before the kill, before its witness got it, is handed over at the restart
    assert held == {c.size: c.note for c in checkpoints}
    assert not list(witness.glob(".*.tmp"))  # no half-written file left behind
    capsys.readouterr()
    assert main(["verify"]) == 0
    assert "VERDICT: intact" in capsys.readouterr().out
