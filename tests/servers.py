"""Real servers the tests start (`tramita serve`, nginx) and waiting for them on a slow machine.

A server just started may refuse connections, reset them, or accept and answer late (a loaded 2-core machine,
workers still importing): `wait_until_answers` retries on every one of those until a generous deadline, and
fails early, with the server's output, if the server has exited.
"""

from __future__ import annotations

import http.client
import json
import os
import resource
import selectors
import shutil
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


def raw_exchange(host: str, port: int, data: bytes, seconds: float = 30.0) -> bytes:
    """Send raw request bytes and read everything the server answers until it closes the connection (a client
    that half-closed would be taken by nginx for one that went away)."""
    with socket.create_connection((host, port), timeout=seconds) as connection:
        try:
            connection.sendall(data)
        except (BrokenPipeError, ConnectionResetError):
            pass  # answered and closed before all of it was sent: the answer is read below
        answer = b""
        try:
            while chunk := connection.recv(65536):
                answer += chunk
        except ConnectionResetError:
            pass
    return answer


def answers(raw: bytes) -> list[tuple[int, dict[str, str], bytes]]:
    """The HTTP/1.x answers in `raw`, in order: status, headers (names lower-cased) and body (by Content-Length)."""
    found = []
    while raw.startswith(b"HTTP/1."):
        head, _, rest = raw.partition(b"\r\n\r\n")
        lines = head.decode("latin-1").split("\r\n")
        headers = dict((name.strip().lower(), value.strip()) for name, _, value in
                       (line.partition(":") for line in lines[1:]))
        length = int(headers.get("content-length", len(rest)))
        found.append((int(lines[0].split()[1]), headers, rest[:length]))
        raw = rest[length:]
    return found


def raw_answer(host: str, port: int, head: bytes) -> tuple[int, dict]:
    """Send raw request bytes and read the whole answer, which must be one problem+json: its status and body."""
    answer = raw_exchange(host, port, head)
    (status, headers, body), *more = answers(answer)
    assert headers.get("content-type") == "application/problem+json" and not more, answer[:500]
    return status, json.loads(body)




# ---------------------------------------------------------------------------------------------- nginx in front

NGINX_CONFIG = REPO / "docs" / "nginx.conf"
UPSTREAM, LISTEN = "server 127.0.0.1:8000;", "listen 80;"
#: The per-address limits of docs/nginx.conf: lifted to stand for clients coming from many addresses.
ADDRESS_LIMITS = ("limit_conn tramita_connections 32;", "limit_req zone=tramita_requests burst=40 nodelay;")
#: nginx's connections per worker process in the tests' main configuration (Debian's default is 768): room for
#: thousands of idle connections, as docs/operations.md advises.
NGINX_CONNECTIONS = 8192


def nginx_binary() -> str | None:
    """The nginx binary (PATH, else Debian's /usr/sbin/nginx), or None."""
    return shutil.which("nginx") or next((path for path in ("/usr/sbin/nginx", "/usr/local/sbin/nginx")
                                          if os.access(path, os.X_OK)), None)


def ipv6_loopback() -> bool:
    """Can this machine listen on ::1? The tests' well-behaved client comes from there, the hostile ones from
    127.0.0.1, so that nginx's per-address limits on the latter leave the former alone."""
    try:
        with socket.socket(socket.AF_INET6) as probe:
            probe.bind(("::1", 0))
        return True
    except OSError:
        return False


def nginx_site(upstream_port: int, listen_port: int, *, lift_address_limits: bool = False) -> str:
    """docs/nginx.conf with the test's ports: its upstream and listen lines, each there exactly once, replaced (nginx
    listens on 127.0.0.1 and, where the machine has it, ::1); its per-address limits removed when asked."""
    text = NGINX_CONFIG.read_text()
    assert text.count(UPSTREAM) == 1 and text.count(LISTEN) == 1, "docs/nginx.conf changed its upstream or listen"
    listen = f"listen 127.0.0.1:{listen_port};" + (f" listen [::1]:{listen_port};" if ipv6_loopback() else "")
    text = text.replace(UPSTREAM, f"server 127.0.0.1:{upstream_port};").replace(LISTEN, listen)
    if lift_address_limits:
        assert all(text.count(line) >= 1 for line in ADDRESS_LIMITS), "docs/nginx.conf changed its limits"
        for line in ADDRESS_LIMITS:
            text = text.replace(line, "")
    return text


def nginx_main_config(folder: Path, site_file: Path) -> str:
    """What Debian's /etc/nginx/nginx.conf provides around conf.d/*.conf, with every path inside `folder`."""
    temp = {name: folder / name for name in ("client_body", "proxy", "fastcgi", "uwsgi", "scgi")}
    return "\n".join([
        "daemon off;", "worker_processes 1;", f"worker_rlimit_nofile {2 * NGINX_CONNECTIONS};",
        f"pid {folder / 'nginx.pid'};", f"error_log {folder / 'error.log'};",
        *(["user root;"] if os.geteuid() == 0 else []),
        f"events {{ worker_connections {NGINX_CONNECTIONS}; }}",
        "http {", f"  access_log {folder / 'access.log'};",
        *(f"  {name}_temp_path {path};" for name, path in temp.items()),
        f"  include {site_file};", "}", ""])


def room_for_descriptors(count: int) -> None:
    """Raise this process's soft limit of open files to `count` where it is lower (up to the hard limit)."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft != resource.RLIM_INFINITY and soft < count:
        resource.setrlimit(resource.RLIMIT_NOFILE, (count if hard == resource.RLIM_INFINITY else min(count, hard),
                                                    hard))


@dataclass
class Proxy:
    """nginx running docs/nginx.conf in front of a `tramita serve`."""

    port: int
    process: subprocess.Popen
    folder: Path
    upstream: Served

    @property
    def url(self) -> str:
        """nginx's address for the tests' well-behaved client: ::1 when the machine has it (see ipv6_loopback)."""
        return f"http://[::1]:{self.port}" if ipv6_loopback() else f"http://127.0.0.1:{self.port}"

    def error_log(self) -> str:
        return (self.folder / "error.log").read_text(errors="replace")


@contextmanager
def nginx_in_front(folder: Path, upstream: Served, binary: str, *,
                   lift_address_limits: bool = False) -> Iterator[Proxy]:
    """nginx with docs/nginx.conf on a free port of 127.0.0.1 (and ::1), passing to `upstream`, its temporary
    files, logs and pid in `folder`, until the block ends; stopped with SIGTERM."""
    folder.mkdir(parents=True, exist_ok=True)
    room_for_descriptors(2 * NGINX_CONNECTIONS)  # nginx inherits it; the tests' clients hold as many
    port = free_port()
    site_file = folder / "tramita.conf"
    site_file.write_text(nginx_site(upstream.port, port, lift_address_limits=lift_address_limits))
    (folder / "nginx.conf").write_text(nginx_main_config(folder, site_file))
    checked = subprocess.run([binary, "-t", "-p", str(folder), "-c", str(folder / "nginx.conf")],
                             capture_output=True, text=True)
    assert checked.returncode == 0, checked.stderr
    with open(folder / "stderr.log", "wb") as out:
        process = subprocess.Popen([binary, "-p", str(folder), "-c", str(folder / "nginx.conf")], stdout=out,
                                   stderr=subprocess.STDOUT)
    proxy = Proxy(port, process, folder, upstream)
    try:
        wait_until_answers(f"{proxy.url}/health", process=process, log=folder / "error.log")
        yield proxy
    finally:
        stop(process)


# ---------------------------------------------------------------------------------------------- hostile clients


def opened(host: str, port: int, count: int, first: bytes = b"", *, half_close: bool = False) -> list[socket.socket]:
    """`count` non-blocking connections that each sent `first` (then half-closed, when asked) and wait."""
    connections = []
    try:
        for _ in range(count):
            connection = socket.create_connection((host, port), timeout=30)
            connections.append(connection)
            if first:
                connection.sendall(first)
            if half_close:
                connection.shutdown(socket.SHUT_WR)
            connection.setblocking(False)
    except BaseException:
        for connection in connections:
            connection.close()
        raise
    return connections


def idle_connections(host: str, port: int, count: int) -> list[socket.socket]:
    """`count` idle connections, by thirds: that send nothing, that send the start of a request and stall, and that
    send the start of a request and half-close (the client end gone quiet for good)."""
    head = b"GET /health HTTP/1.1\r\nHost: x\r\n"
    third = count // 3
    connections = opened(host, port, count - 2 * third)
    try:
        connections += opened(host, port, third, head)
        connections += opened(host, port, third, head, half_close=True)
    except BaseException:
        for connection in connections:
            connection.close()
        raise
    return connections


def answered(connection: socket.socket, heard: dict[socket.socket, bytes]) -> bool:
    """Read what the server sent on this non-blocking connection into `heard`: has it closed the connection?"""
    try:
        while chunk := connection.recv(65536):
            heard[connection] = heard.get(connection, b"") + chunk
        return True
    except BlockingIOError:
        return False
    except ConnectionResetError:
        return True


@dataclass
class Watched:
    """What the server did with the connections `watch` held: what it said on each, and which it closed."""

    heard: dict[socket.socket, bytes]
    closed: set[socket.socket]
    rounds: int


def watch(connections: list[socket.socket], seconds: float, meanwhile: Callable[[], None], *,
          trickle: bytes = b"", until_closed: bool = False) -> Watched:
    """Call `meanwhile()` again and again for `seconds` (after each, send `trickle` on every connection still open,
    then wait up to a quarter second for the server to say something on one of them); with `until_closed`, stop
    as soon as the server has closed every connection, which must happen within `seconds`. The connections are
    closed here in the end, whatever happened."""
    deadline, still_open, heard, rounds = time.monotonic() + seconds, list(connections), {}, 0
    poller = selectors.DefaultSelector()  # not select(): thousands of descriptors
    try:
        for connection in still_open:
            poller.register(connection, selectors.EVENT_READ)
        while time.monotonic() < deadline and not (until_closed and not still_open):
            meanwhile()
            rounds += 1
            for connection in still_open if trickle else ():
                try:
                    connection.send(trickle)
                except (BlockingIOError, BrokenPipeError, ConnectionResetError):
                    pass  # full, or closed: the read below says which
            ready = {key.fileobj for key, _ in poller.select(0.25)}
            for connection in [c for c in still_open if c in ready and answered(c, heard)]:
                poller.unregister(connection)
                still_open.remove(connection)
        if until_closed:
            assert still_open == [], f"{len(still_open)} of {len(connections)} connections still open"
        return Watched(heard, set(connections) - set(still_open), rounds)
    finally:
        poller.close()
        for connection in connections:
            connection.close()
