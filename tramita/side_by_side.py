"""`tramita up` (what `make run` runs): the API, the projector and the scheduler side by side, each its own process,
stopped together."""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from typing import Any


def run_side_by_side(commands: dict[str, Sequence[str]], say: Callable[[str], None] = print) -> int:
    """Start each command; when one stops or on Ctrl-C / SIGTERM, stop them all. The first failure's code."""
    processes = {name: subprocess.Popen(list(argv)) for name, argv in commands.items()}
    stopping = False

    def stop(*_: Any) -> None:
        nonlocal stopping
        stopping = True

    previous = {s: signal.signal(s, stop) for s in (signal.SIGINT, signal.SIGTERM)}
    code = 0
    try:
        while not stopping:
            ended = {name: p.returncode for name, p in processes.items() if p.poll() is not None}
            if ended:
                name, code = next(iter(ended.items()))
                say(f"{name} stopped (exit {code}); stopping the others")
                break
            time.sleep(0.2)
    finally:
        for process in processes.values():
            if process.poll() is None:
                process.send_signal(signal.SIGTERM)
        for name, process in processes.items():
            try:
                process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                say(f"{name} did not stop in 15 s; killing it")
                process.kill()
                process.wait()
        for signum, handler in previous.items():
            signal.signal(signum, handler)
    return code


def tramita_command(*args: str) -> list[str]:
    """This installation's `tramita` command (the same interpreter, whatever PATH holds)."""
    return [sys.executable, "-m", "tramita", *args]

