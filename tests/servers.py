"""Real servers the tests start (`tramita serve`, nginx) and waiting for them on a slow machine.

A server just started may refuse connections, reset them, or accept and answer late (a loaded 2-core machine,
workers still importing): `wait_until_answers` retries on every one of those until a generous deadline, and
fails early, with the server's output, if the server has exited.
"""

from __future__ import annotations

import http.client
import json
import os
import select
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
#: Seconds a server has to answer after being started, however loaded the machine.
START_SECONDS = 120.0
#: Seconds one attempt to reach it waits for an answer before trying again.
ATTEMPT_SECONDS = 5.0
#: Seconds a server has to stop after SIGTERM.
STOP_SECONDS = 60.0


def in_ci() -> bool:
    """Is the suite running in CI (CI set), where a missing server binary is a failure, not a skip?"""
    return os.environ.get("CI", "").strip().lower() not in ("", "0", "false", "no")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_until_answers(url: str, *, process: subprocess.Popen | None = None, log: Path | None = None,
                       seconds: float = START_SECONDS) -> None:
    """Until a GET of `url` answers 2xx: refused or reset connections, read timeouts and error statuses are tried
    again until `seconds` have passed; a `process` that exits meanwhile fails at once, showing its `log`."""
    deadline = time.monotonic() + seconds
    while True:
        if process is not None and process.poll() is not None:
            raise AssertionError(f"the server exited ({process.returncode}) before answering {url}:\n"
                                 f"{log.read_text(errors='replace') if log else ''}")
        try:
            with urllib.request.urlopen(url, timeout=ATTEMPT_SECONDS) as response:
                response.read()
                return
        except (OSError, http.client.HTTPException) as error:  # URLError, refused, reset, timed out, 5xx
            if time.monotonic() > deadline:
                raise AssertionError(f"{url} did not answer within {seconds:g} s: {error!r}") from error
        time.sleep(0.1)


@dataclass
class Served:
    """A `tramita serve` running: its address, its process and where its output goes."""

    host: str
    port: int
    process: subprocess.Popen
    log: Path

    @property
    def url(self) -> str:
        return f"http://{self.host}:{self.port}"

    def output(self) -> str:
        return self.log.read_text(errors="replace")


def stop(process: subprocess.Popen) -> int:
    """SIGTERM, then SIGKILL if it has not stopped in STOP_SECONDS; its exit status."""
    if process.poll() is None:
        process.send_signal(signal.SIGTERM)
        try:
            return process.wait(timeout=STOP_SECONDS)
        except subprocess.TimeoutExpired:
            process.kill()
    return process.wait()


@contextmanager
def serving(log_dir: Path, *args: str, env: dict[str, str] | None = None, port: int | None = None,
            wait_path: str = "/health") -> Iterator[Served]:
    """`tramita serve --bind 127.0.0.1:<port> ARGS` until the block ends, answering `wait_path` before it starts;
    stopped with SIGTERM (its exit status is then `served.process.returncode`)."""
    port = port or free_port()
    log = log_dir / f"serve-{port}.log"
    with open(log, "wb") as out:
        process = subprocess.Popen([sys.executable, "-m", "tramita", "serve", "--bind", f"127.0.0.1:{port}", *args],
                                   cwd=REPO, env={**os.environ, "PYTHONPATH": str(REPO), **(env or {})},
                                   stdout=out, stderr=subprocess.STDOUT)
    served = Served("127.0.0.1", port, process, log)
    try:
        wait_until_answers(served.url + wait_path, process=process, log=log)
        yield served
    finally:
        stop(process)


def request(url: str, method: str = "GET", body: dict | None = None, timeout: float = 10,
            **headers: str) -> tuple[int, dict, bytes]:
    """One request on a connection of its own: status, headers, body (an error status is returned, not raised)."""
    data = json.dumps(body).encode() if body is not None else None
    req = urllib.request.Request(url, data=data, method=method,
                                 headers={"Content-Type": "application/json", **headers})
    try:
        with urllib.request.urlopen(req, timeout=timeout) as response:
            return response.status, dict(response.headers), response.read()
    except urllib.error.HTTPError as error:
        return error.code, dict(error.headers), error.read()


def raw_answer(host: str, port: int, head: bytes) -> tuple[int, dict]:
    """Send raw request bytes and read the whole answer, which must be problem+json: its status and body."""
    with socket.create_connection((host, port), timeout=30) as connection:
        connection.sendall(head)
        answer = b""
        while chunk := connection.recv(65536):
            answer += chunk
    head_part, _, body = answer.partition(b"\r\n\r\n")
    lines = head_part.decode("latin-1").split("\r\n")
    assert "Content-Type: application/problem+json" in lines, answer[:500]
    return int(lines[0].split()[1]), json.loads(body)


def idle_connections(host: str, port: int, count: int) -> list[socket.socket]:
    """`count` connections that go idle: half send the start of a request and stall, half send nothing at all."""
    connections = [socket.create_connection((host, port)) for _ in range(count)]
    for n, connection in enumerate(connections):
        if n % 2:
            connection.sendall(b"GET /health HTTP/1.1\r\nHost: x\r\n")
        connection.setblocking(False)
    return connections


def closed_by_the_server(connection: socket.socket) -> bool:
    """Has the server closed this (non-blocking) connection? What it said before closing is read and dropped."""
    try:
        while connection.recv(4096):
            pass
        return True
    except BlockingIOError:
        return False
    except ConnectionResetError:
        return True


def until_closed(connections: list[socket.socket], seconds: float, meanwhile: Callable[[], None]) -> None:
    """Call `meanwhile()` again and again (after each, wait up to a quarter second for a connection to be closed)
    until the server has closed every connection, which must happen within `seconds`. The connections are closed
    here in the end, whatever happened."""
    deadline, still_open = time.monotonic() + seconds, list(connections)
    try:
        while still_open and time.monotonic() < deadline:
            meanwhile()
            select.select(still_open, [], [], 0.25)
            still_open = [c for c in still_open if not closed_by_the_server(c)]
        assert still_open == [], f"{len(still_open)} of {len(connections)} idle connections still open"
    finally:
        for connection in connections:
            connection.close()


def connections_by_worker(served: Served) -> dict[int, int]:
    """How many established client connections each of the server's worker processes holds (Linux /proc)."""
    inodes = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            rows = Path(table).read_text().splitlines()[1:]
        except OSError:
            continue
        for row in rows:
            fields = row.split()
            local_port, state, inode = int(fields[1].rsplit(":", 1)[1], 16), fields[3], fields[9]
            if local_port == served.port and state == "01":  # ESTABLISHED, on the server's side
                inodes.add(f"socket:[{inode}]")
    held = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            if int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1]) != served.process.pid:
                continue
            links = [os.readlink(fd) for fd in (entry / "fd").iterdir()]
        except OSError:
            continue
        held[int(entry.name)] = sum(link in inodes for link in links)
    return held
