"""A newcomer's first run: `make run PORT=...` serves there, a busy port is said plainly before anything is set
up, the address and the demo's tokens come last, once the API answers, and the tokens stay the same across
restarts."""

from __future__ import annotations

import os
import re
import socket
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.servers import START_SECONDS, free_port, stop

REPO = Path(__file__).resolve().parents[1]


def up(folder: Path, port: int) -> subprocess.Popen:
    """`tramita up` as `make run` starts it, in `folder` (its own var/), its output in folder/up-N.log."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("TRAMITA")}
    env.update(PYTHONPATH=str(REPO), TRAMITA_DATABASE_URL="sqlite:///var/tramita.sqlite",
               TRAMITA_SIGNING_KEY="var/tramita-signing.key")
    log = folder / f"up-{len(list(folder.glob('up-*.log')))}.log"
    with open(log, "wb") as out:
        return subprocess.Popen([sys.executable, "-m", "tramita", "up", "--bind", f"127.0.0.1:{port}"], cwd=folder,
                                env=env, stdout=out, stderr=subprocess.STDOUT)


def printed_tokens(folder: Path, process: subprocess.Popen) -> tuple[str, list[str]]:
    """Wait until `tramita up` has printed its demo tokens; its whole output so far and the tokens."""
    log = sorted(folder.glob("up-*.log"))[-1]
    deadline = time.monotonic() + START_SECONDS
    while True:
        text = log.read_text(errors="replace")
        tokens = re.findall(r"^  \S+ +(trm_\S+)$", text, re.MULTILINE)
        if len(tokens) == 5:
            return text, tokens
        assert process.poll() is None, f"tramita up exited ({process.returncode}):\n{text}"
        assert time.monotonic() < deadline, f"no demo tokens printed within {START_SECONDS} s:\n{text}"
        time.sleep(0.2)


@pytest.mark.slow
def test_the_demo_tokens_come_last_once_the_api_answers_and_stay_the_same_after_a_restart(tmp_path):
    (tmp_path / "var").mkdir()
    port = free_port()
    first = up(tmp_path, port)
    try:
        output, tokens = printed_tokens(tmp_path, first)
    finally:
        assert stop(first) == 0
    assert output.index(f"Listening at: http://127.0.0.1:{port}") < output.index("tramita API:") \
        < output.index(tokens[0])  # the server's own start-up lines first; the address, then the tokens
    assert "LC35-1991-0001:" not in output  # the demo's story is `seed-demo`'s; `up` says it in one line
    kept = tmp_path / "var" / "demo-tokens.json"
    assert stat.S_IMODE(kept.stat().st_mode) == 0o600
    second = up(tmp_path, port)
    try:
        _, again = printed_tokens(tmp_path, second)
    finally:
        assert stop(second) == 0
    assert again == tokens


@pytest.mark.slow
def test_a_busy_port_is_said_in_one_line_naming_port_before_any_token_or_file_is_made(tmp_path):
    (tmp_path / "var").mkdir()
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        process = up(tmp_path, port)
        assert process.wait(timeout=START_SECONDS) == 1
    said = sorted(tmp_path.glob("up-*.log"))[-1].read_text()
    assert said.count("\n") == 1 and "make run PORT=" in said and f"127.0.0.1:{port}" in said
    assert "outro programa já a usa" in said and "trm_" not in said
    assert sorted(path.name for path in (tmp_path / "var").iterdir()) == []  # no key, no database, no tokens


def test_make_run_serves_on_the_port_it_is_given():
    dry = subprocess.run(["make", "-n", "run", "PORT=8123"], cwd=REPO, capture_output=True, text=True, timeout=60)
    assert dry.returncode == 0, dry.stderr
    assert "tramita up --bind 127.0.0.1:8123" in dry.stdout
    assert "tramita up --bind 127.0.0.1:8000" in subprocess.run(["make", "-n", "run"], cwd=REPO, capture_output=True,
                                                                 text=True, timeout=60).stdout
