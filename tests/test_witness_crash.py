"""The witness as its own process (`tramita witness keys init|show`, `tramita witness serve`): killed with SIGKILL
at any moment while two forked histories of one log race for its cosignature, then restarted on the same file, it
has never cosigned two inconsistent checkpoints, and its key file is private."""

from __future__ import annotations

import os
import random
import signal
import stat
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from audit import merkle
from audit.cosign import AddCheckpoint, CosignVerifier, cosignatures
from audit.notes import Checkpoint, SignedNote, Signer
from tests.servers import REPO, free_port, stop, wait_until_answers

LOG = Signer("localhost/tramita", b"\x05" * 32)
#: Leaves both histories share; from there on each has its own.
SHARED = 4
#: Seconds the race may take at most (polled, never slept through).
DEADLINE = 120.0


def history(view: int, count: int) -> list[bytes]:
    return [merkle.leaf_hash(bytes([i, view if i >= SHARED else 0])) for i in range(count)]


def tramita(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "tramita", *args], cwd=REPO, capture_output=True, text=True,
                          env={**os.environ, "PYTHONPATH": str(REPO), **env}, check=False)


class WitnessProcess:
    def __init__(self, tmp_path: Path, env: dict[str, str], log_key: str = str(LOG.verifier)) -> None:
        self.port, self.env, self.log, self.log_key = free_port(), env, tmp_path / "witness.log", log_key
        self.process: subprocess.Popen | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self) -> None:
        with open(self.log, "ab") as out:
            self.process = subprocess.Popen(
                [sys.executable, "-m", "tramita", "witness", "serve", "--bind", f"127.0.0.1:{self.port}",
                 "--log-key", self.log_key], cwd=REPO, env={**os.environ, "PYTHONPATH": str(REPO), **self.env},
                stdout=out, stderr=subprocess.STDOUT, start_new_session=True)
        wait_until_answers(self.url + "/", process=self.process, log=self.log)

    def kill(self) -> None:
        """SIGKILL the whole process group (gunicorn's arbiter and its worker), no chance to finish anything."""
        os.killpg(self.process.pid, signal.SIGKILL)
        self.process.wait()


def post(url: str, body: bytes) -> tuple[int, str]:
    try:
        with urllib.request.urlopen(urllib.request.Request(url + "/add-checkpoint", data=body, method="POST"),
                                    timeout=10) as answer:
            return answer.status, answer.read().decode()
    except urllib.error.HTTPError as error:
        return error.code, error.read().decode()
    except OSError:
        return 0, ""  # killed mid-request


@pytest.fixture
def witness_env(tmp_path):
    env = {"TRAMITA_WITNESS_KEY": str(tmp_path / "keys" / "witness.key"),
           "TRAMITA_WITNESS_DATABASE_URL": f"sqlite:///{tmp_path / 'witness.sqlite'}"}
    made = tramita("witness", "keys", "init", "--name", "mpac.mp.br/testemunha", env=env)
    assert made.returncode == 0, made.stderr
    return env


def test_the_witness_key_file_is_private_and_shown_as_a_c2sp_vkey(tmp_path, witness_env):
    path = Path(witness_env["TRAMITA_WITNESS_KEY"])
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    shown = tramita("witness", "keys", "show", env=witness_env)
    verifier = CosignVerifier.parse(shown.stdout)
    assert verifier.name == "mpac.mp.br/testemunha" and str(verifier) == shown.stdout.strip()
    again = tramita("witness", "keys", "init", env=witness_env)
    assert again.returncode == 2 and "never overwritten" in again.stderr


def test_a_witness_killed_while_cosigning_never_cosigns_two_inconsistent_checkpoints(tmp_path, witness_env):
    verifier = CosignVerifier.parse(tramita("witness", "keys", "show", env=witness_env).stdout)
    witness = WitnessProcess(tmp_path, witness_env)
    witness.start()
    cosigned: list[tuple[int, int, str]] = []  # (view, size, cosigned note)
    answered = [0]
    done = threading.Event()
    lock = threading.Lock()

    def client(view: int) -> None:
        size, old = SHARED + 1, 0
        while not done.is_set() and size < 2000:  # the kills end it, long before this bound
            hashes = history(view, size)
            proof = merkle.consistency_proof(old, size, merkle.subtree_of(hashes)) if 0 < old < size else []
            note = LOG.sign_note(Checkpoint(LOG.name, size, merkle.root_of(hashes)).text())
            status, body = post(witness.url, AddCheckpoint(old, tuple(proof), note).encode())
            with lock:
                answered[0] += 1
                if status == 200:
                    cosigned.append((view, size, note + body))
            if status == 200:
                old, size = size, size + 1
            elif status == 409:
                old = int(body)  # what the witness holds: try from there (the other history's proof will fail)
                size = max(size, old + 1) if old >= size else size
            elif status == 422:
                size += 1

    threads = [threading.Thread(target=client, args=(view,)) for view in (1, 2)]
    for thread in threads:
        thread.start()
    rounds, chooser = 0, random.Random(39)
    deadline = time.monotonic() + DEADLINE
    try:
        while rounds < 6 and time.monotonic() < deadline:
            target = answered[0] + chooser.randint(3, 25)
            while answered[0] < target and time.monotonic() < deadline:
                time.sleep(0.005)  # polling the clients' progress, with the deadline above
            witness.kill()
            witness.start()
            rounds += 1
    finally:
        done.set()
        for thread in threads:
            thread.join(timeout=30)
        stop(witness.process)
    assert rounds == 6 and cosigned, witness.log.read_text(errors="replace")
    for _, _, note in cosigned:
        assert cosignatures(note, [verifier])
    views = {view for view, _, _ in cosigned}
    assert len(views) == 1, f"the witness cosigned both histories: {sorted((v, s) for v, s, _ in cosigned)}"
    sizes = [size for _, size, _ in cosigned]
    assert sizes == sorted(sizes)
    last = SignedNote.parse(cosigned[-1][2])
    assert Checkpoint.parse(last.text).size == sizes[-1]
