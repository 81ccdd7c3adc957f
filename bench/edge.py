"""Benchmark: the HTTP edge under hostile clients. How long a normal request (an auditor reads a case) takes while
slow heads, slow bodies or thousands of idle connections hold the server, for each candidate:

- `nginx`: docs/nginx.conf in front of `tramita serve` (stock gunicorn gthread, 2 workers x 4 threads), the
  production arrangement; the hostile clients come from one address (127.0.0.1), the normal one from ::1;
- `nginx-many`: the same without nginx's per-address limits, standing for hostile clients from many addresses;
- `gunicorn`: `tramita serve` alone (what `make run` serves on 127.0.0.1), for comparison;
- `granian`: granian's WSGI interface over `tramita.web:create_app` (2 workers x 4 blocking threads), when the
  package is installed (`pip install granian`).

Each phase holds its hostile connections for --seconds (8 by default: less than nginx's 10 s header timeout)
while one client asks for the case every 60 ms (under nginx's 20 requests/s per address), each request given
5 s at most; a request that fails or times out counts as failed, with its time. Then the hostile connections are
closed and the server is given up to 60 s to answer again. Everything listens on loopback; nginx's files, the
database and the logs are in a temporary folder. Prints one row per candidate and phase: p50, p99 and max of the
normal request's time, how many were answered 200, and what the server did with the hostile connections.
"""

from __future__ import annotations

import argparse
import io
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager, redirect_stdout
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from tests.servers import (  # noqa: E402
    Served, free_port, ipv6_loopback, nginx_binary, nginx_in_front, request, room_for_descriptors, serving, stop,
    wait_until_answers, watch,
)

CASE = "LC35-1991-0001"
#: Seconds between two normal requests, and the most one may take.
PROBE_INTERVAL, PROBE_TIMEOUT = 0.06, 5.0
#: Seconds the server has to answer again after a phase.
RECOVERY_SECONDS = 60.0
CANDIDATES = ("nginx", "nginx-many", "gunicorn", "granian")
SLOW_HEAD = b"GET /cases?slow-head HTTP/1.1\r\nHost: x\r\nX-Slow: "
SLOW_BODY = (b"POST /cases?slow-body HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
             b"Content-Length: 100000\r\n\r\n{")


class Probe(threading.Thread):
    """A normal client: GET the case every PROBE_INTERVAL until stopped; each request's time and outcome."""

    def __init__(self, url: str, token: str) -> None:
        super().__init__(daemon=True)
        self.url, self.token, self.stopping = url, token, threading.Event()
        self.times: list[float] = []
        self.answered = 0

    def run(self) -> None:
        while not self.stopping.is_set():
            started = time.monotonic()
            try:
                status = request(f"{self.url}/cases/{CASE}", timeout=PROBE_TIMEOUT,
                                 Authorization=f"Bearer {self.token}")[0]
            except OSError:
                status = 0
            took = time.monotonic() - started
            self.times.append(took)
            self.answered += status == 200
            self.stopping.wait(max(0.0, PROBE_INTERVAL - took))


def percentile(values: list[float], fraction: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(fraction * len(ordered)))] if ordered else float("nan")


def hostile_connections(kind: str, host: str, port: int, count: int) -> list[socket.socket]:
    """Up to `count` non-blocking connections of `kind`, each having sent its first bytes (idle: by thirds, nothing,
    the start of a head, the start of a head then half-closed); fewer when the server stops taking them (a
    connection not accepted within 5 s ends the opening)."""
    first = {"slow-head": SLOW_HEAD, "slow-body": SLOW_BODY}.get(kind, b"")
    connections: list[socket.socket] = []
    for n in range(count):
        part = first or (b"", b"GET /health HTTP/1.1\r\nHost: x\r\n")[n % 3 > 0]
        try:
            connection = socket.create_connection((host, port), timeout=5)
            connections.append(connection)
            if part:
                connection.sendall(part)
            if kind == "idle" and n % 3 == 2:
                connection.shutdown(socket.SHUT_WR)
        except OSError:
            break
        connection.setblocking(False)
    return connections


def phase(name: str, url: str, token: str, host: str, port: int, seconds: float, hostile: str, count: int) -> str:
    """Hold `count` hostile connections of kind `hostile` for `seconds` while the probe asks; the table's row."""
    connections = hostile_connections(hostile, host, port, count) if count else []
    trickle = {"slow-head": b"a", "slow-body": b" "}.get(hostile, b"")
    probe = Probe(url, token)
    probe.start()
    try:
        if connections:
            watched = watch(connections, seconds, lambda: None, trickle=trickle)
            statuses = sorted({raw.split(b" ", 2)[1].decode() for raw in watched.heard.values() if raw[:5] == b"HTTP/"})
            silent = len(watched.closed - set(watched.heard))
            fate = (f"{len(connections) - len(watched.heard) - silent} held, {len(watched.heard)} answered "
                    f"{'/'.join(statuses) or '-'}, {silent} closed silently"
                    + (f" ({count - len(connections)} not accepted)" if len(connections) < count else ""))
        else:
            time.sleep(seconds)
            fate = "-"
    finally:
        probe.stopping.set()
        probe.join(PROBE_TIMEOUT + 1)
    wait_until_answers(f"{url}/health", seconds=RECOVERY_SECONDS)
    times = [t * 1000 for t in probe.times]
    label = f"{hostile} x{count}" if count else "none"
    return (f"| {name} | {label} | {percentile(times, 0.5):.1f} | {percentile(times, 0.99):.1f} | "
            f"{max(times, default=float('nan')):.1f} | {probe.answered}/{len(times)} | {fate} |")


@contextmanager
def candidate(name: str, folder: Path, served: Served) -> Iterator[tuple[str, str, int] | None]:
    """The candidate's (normal client's URL, hostile clients' host, port), or None when it cannot run here."""
    if name in ("nginx", "nginx-many"):
        binary = nginx_binary()
        if binary is None:
            yield None
            return
        with nginx_in_front(folder / name, served, binary, lift_address_limits=name == "nginx-many") as proxy:
            yield proxy.url, "127.0.0.1", proxy.port
    elif name == "gunicorn":
        yield served.url, served.host, served.port
    else:
        granian = shutil.which("granian", path=str(Path(sys.executable).parent))
        if granian is None:
            yield None
            return
        port = free_port()
        with open(folder / "granian.log", "wb") as out:
            process = subprocess.Popen([granian, "--interface", "wsgi", "--factory", "--workers", "2",
                                        "--blocking-threads", "4", "--host", "127.0.0.1", "--port", str(port),
                                        "--no-access-log", "tramita.web:create_app"], cwd=REPO, stdout=out,
                                       stderr=subprocess.STDOUT, env={**os.environ, "PYTHONPATH": str(REPO)})
        try:
            wait_until_answers(f"http://127.0.0.1:{port}/health", process=process, log=folder / "granian.log")
            yield f"http://127.0.0.1:{port}", "127.0.0.1", port
        finally:
            stop(process)


def demo_database(folder: Path) -> str:
    """A SQLite database with the demo and an auditor's token; the token."""
    from tramita.cli import main as tramita

    os.environ["TRAMITA_DATABASE_URL"] = f"sqlite:///{folder / 'tramita.sqlite'}"
    printed = io.StringIO()
    with redirect_stdout(printed):
        assert tramita(["migrate"]) == 0 and tramita(["seed-demo"]) == 0
    printed = io.StringIO()
    with redirect_stdout(printed):
        assert tramita(["token", "create", "--role", "auditor", "--name", "bench"]) == 0
    return printed.getvalue().splitlines()[1]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--candidates", default=",".join(CANDIDATES),
                        help=f"comma-separated, of {', '.join(CANDIDATES)} (default: all)")
    parser.add_argument("--seconds", type=float, default=8.0, help="seconds each phase holds its connections")
    parser.add_argument("--idle", type=int, default=3000, help="idle and half-open connections (default 3000)")
    args = parser.parse_args()
    phases = [("none", 0), ("slow-head", 200), ("slow-body", 10), ("slow-body", 100), ("idle", args.idle)]
    print(f"normal request: GET /cases/{CASE} every {PROBE_INTERVAL * 1000:.0f} ms, {PROBE_TIMEOUT:g} s at most; "
          f"phases of {args.seconds:g} s; the normal client from {'::1' if ipv6_loopback() else '127.0.0.1'}")
    print("| candidate | hostile connections | p50 ms | p99 ms | max ms | answered 200 | hostile connections' fate |")
    print("| --- | --- | --- | --- | --- | --- | --- |")
    room_for_descriptors(4 * args.idle + 1024)
    with tempfile.TemporaryDirectory(prefix="tramita-edge-") as tmp:
        folder = Path(tmp)
        token = demo_database(folder)
        with serving(folder, "--workers", "2", wait_path="/health") as served:
            for name in args.candidates.split(","):
                with candidate(name, folder, served) as target:
                    if target is None:
                        print(f"| {name} | not installed here: skipped | | | | | |", flush=True)
                        continue
                    url, host, port = target
                    for hostile, count in phases:
                        print(phase(name, url, token, host, port, args.seconds, hostile, count), flush=True)


if __name__ == "__main__":
    main()
