"""Serving: gunicorn in front of `create_app()`, and `tramita up`, which runs the whole system side by side.

Each gunicorn worker builds its own application after the fork (one application per process; no preloading,
so no database connection is shared across a fork).
"""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from typing import Any

from gunicorn.app.base import BaseApplication


class Gunicorn(BaseApplication):
    """gunicorn with tramita's app factory, configured from the command line (no config file read)."""

    def __init__(self, options: dict[str, Any]) -> None:
        self.options = options
        super().__init__()

    def load_config(self) -> None:
        for key, value in self.options.items():
            self.cfg.set(key, value)

    def load(self):  # noqa: ANN201 - gunicorn's hook, called in each worker
        from api.app import create_app

        return create_app()


def serve(bind: str, workers: int, *, timeout: int = 30) -> None:
    """Run gunicorn until it is stopped (SIGTERM / Ctrl-C stop it gracefully)."""
    Gunicorn({"bind": bind, "workers": workers, "timeout": timeout, "accesslog": "-", "proc_name": "tramita-api",
              # gunicorn's control socket is one path per user: two servers (tests, a bench) would share it.
              "control_socket_disable": True}).run()


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
    return [sys.executable, "-m", "api.cli", *args]

