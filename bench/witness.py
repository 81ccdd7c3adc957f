"""Benchmark: what a cosigning witness costs the log at each checkpoint: one add-checkpoint to a `tramita witness
serve` process, against the witness's own work on the same request in this process.

Usage: python bench/witness.py [--requests N] [--leaves L]

What is measured
----------------
0. Set-up (untimed). A log key and a witness key made in a temporary folder; a tree of L leaves (default 100,000,
   random 32-byte leaf hashes) in memory. N + 1 checkpoints are signed beforehand, growing the tree by one leaf
   each, each with the RFC 9162 consistency proof from the one before (the log's side of the work is not timed).

1. Over HTTP. `tramita witness serve` on 127.0.0.1 (gunicorn, one worker, its own SQLite file); the N requests
   are POSTed in order, one connection each (as the log sends them), timing each from connecting to reading the
   cosignature (`time.perf_counter`). Every answer must be 200.

2. In process (the baseline). `Witness.add_checkpoint` on another SQLite file in the same folder, the same N
   requests: parsing, the log's signature, the proof, the IMMEDIATE transaction committed with synchronous FULL,
   the cosignature; no HTTP.

Printed: min-median-max of each in ms, and last `ratio: <HTTP median ÷ in-process median>` (for information: what
the service adds around the witness's own work; no goal).
"""

from __future__ import annotations

import argparse
import os
import secrets
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from audit import merkle  # noqa: E402
from audit.cosign import AddCheckpoint, Cosigner  # noqa: E402
from audit.notes import Checkpoint, Signer  # noqa: E402
from audit.witness_service import Witness, WitnessStore  # noqa: E402


def requests(signer: Signer, leaves: list[bytes], count: int) -> list[bytes]:
    subtree = merkle.subtree_of(leaves)
    start = len(leaves) - count - 1
    bodies, old = [], 0
    for size in range(start, len(leaves)):
        root = subtree(0, size)
        proof = merkle.consistency_proof(old, size, subtree) if old else []
        bodies.append(AddCheckpoint(old, tuple(proof), signer.sign_note(Checkpoint(signer.name, size, root).text()))
                      .encode())
        old = size
    return bodies


def post(url: str, body: bytes) -> float:
    started = time.perf_counter()
    with urllib.request.urlopen(urllib.request.Request(url, data=body, method="POST"), timeout=30) as answer:
        answer.read()
        assert answer.status == 200
    return time.perf_counter() - started


def summary(name: str, seconds: list[float]) -> float:
    median = statistics.median(seconds)
    print(f"{name}: min {min(seconds) * 1000:.2f} ms, median {median * 1000:.2f} ms, max {max(seconds) * 1000:.2f} ms")
    return median


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--requests", type=int, default=200, help="add-checkpoint requests timed (default 200)")
    parser.add_argument("--leaves", type=int, default=100_000, help="the tree's size (default 100,000)")
    options = parser.parse_args()
    signer, cosigner = Signer.generate("bench.example/log"), Cosigner.generate("bench.example/witness")
    leaves = [merkle.leaf_hash(secrets.token_bytes(32)) for _ in range(options.leaves)]
    bodies = requests(signer, leaves, options.requests)
    with tempfile.TemporaryDirectory() as folder:
        key = Path(folder) / "witness.key"
        key.write_text(f"{cosigner}\n", encoding="ascii")
        key.chmod(0o600)
        port = 20000 + secrets.randbelow(20000)
        env = {**os.environ, "PYTHONPATH": str(REPO), "TRAMITA_WITNESS_KEY": str(key),
               "TRAMITA_WITNESS_DATABASE_URL": f"sqlite:///{folder}/served.sqlite"}
        served = subprocess.Popen([sys.executable, "-m", "tramita", "witness", "serve", "--bind", f"127.0.0.1:{port}",
                                   "--log-key", str(signer.verifier)], cwd=REPO, env=env,
                                  stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            deadline = time.monotonic() + 60
            while True:
                try:
                    urllib.request.urlopen(f"http://127.0.0.1:{port}/", timeout=5).read()
                    break
                except OSError:
                    if time.monotonic() > deadline or served.poll() is not None:
                        raise SystemExit("the witness did not start")
                    time.sleep(0.1)
            post(f"http://127.0.0.1:{port}/add-checkpoint", bodies[0])
            over_http = [post(f"http://127.0.0.1:{port}/add-checkpoint", body) for body in bodies[1:]]
        finally:
            served.terminate()
            served.wait(timeout=60)
        witness = Witness(WitnessStore(Path(folder) / "in-process.sqlite"), cosigner, [signer.verifier])
        assert witness.add_checkpoint(bodies[0]).status == 200
        in_process = []
        for body in bodies[1:]:
            started = time.perf_counter()
            assert witness.add_checkpoint(body).status == 200
            in_process.append(time.perf_counter() - started)
    print(f"tree of {options.leaves} leaves, {options.requests} add-checkpoint requests, each one leaf larger")
    http = summary("over HTTP (tramita witness serve)", over_http)
    own = summary("in process (Witness.add_checkpoint)", in_process)
    print(f"ratio: {http / own:.2f}")


if __name__ == "__main__":
    main()
