"""`tramita up` (what `make run` runs): the API, the projector and the scheduler side by side, each its own process,
stopped together."""

from __future__ import annotations

import errno
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Callable, Sequence
from typing import Any

from tramita.cli.language import say as worded


def port_taken(host: str, port: str) -> str | None:
    """Why `host:port` cannot be served on now (the system's words: in use, no such address), or None when it can.
    A port taken between this look and the server's own bind still stops `tramita up`, with the server's error."""
    try:
        family = socket.AF_INET6 if ":" in host else socket.AF_INET
        with socket.socket(family, socket.SOCK_STREAM) as probe:
            probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as gunicorn binds: TIME_WAIT is free
            probe.bind((host, int(port)))
    except OSError as error:
        return BIND_ERRORS.get(error.errno or 0, error.strerror or str(error))
    except (ValueError, OverflowError):
        return "não é um número de porta"
    return None


#: Why a port cannot be served on, in the words a person reads (the system's own words for any other reason).
BIND_ERRORS = {errno.EADDRINUSE: "outro programa já a usa", errno.EACCES: "sem permissão para usá-la",
               errno.EADDRNOTAVAIL: "este endereço não é desta máquina"}


def answers(url: str) -> bool:
    """Whether `url` answers 200 now (within 5 seconds: a worker still starting answers once it has)."""
    try:
        with urllib.request.urlopen(url, timeout=5) as response:  # noqa: S310 - our own http:// address
            return response.status == 200
    except (OSError, ValueError):
        return False


def run_side_by_side(commands: dict[str, Sequence[str]], say: Callable[[str], None] = print,
                     ready: tuple[str, Callable[[], None]] | None = None) -> int:
    """Start each command; when one stops or on Ctrl-C / SIGTERM, stop them all. The first failure's code.
    `ready`: (a URL, what to do once): called the first time the URL answers 200, so that what a person needs
    (the address, the tokens) is printed after the processes' own start-up lines."""
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
                say(worded("%(name)s stopped (exit %(code)s); stopping the others", name=name, code=str(code)))
                break
            if ready is not None and answers(ready[0]):
                ready[1]()
                ready = None
            time.sleep(0.2)
    finally:
        for process in processes.values():
            if process.poll() is None:
                process.send_signal(signal.SIGTERM)
        for name, process in processes.items():
            try:
                process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                say(worded("%(name)s did not stop in 15 s; killing it", name=name))
                process.kill()
                process.wait()
        for signum, handler in previous.items():
            signal.signal(signum, handler)
    return code


def tramita_command(*args: str) -> list[str]:
    """This installation's `tramita` command (the same interpreter, whatever PATH holds)."""
    return [sys.executable, "-m", "tramita", *args]

