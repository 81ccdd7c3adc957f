"""Serving: gunicorn in front of `create_app()`, and `tramita up`, which runs the whole system side by side.

Each gunicorn worker builds its own application after the fork (one application per process; no preloading,
so no database connection is shared across a fork).

Slow clients. The workers are gunicorn's threaded workers (`gthread`) with the request read off the threads:
`TramitaWorker` keeps every connection on its event loop until a whole request has arrived (its head, and its
body when the Content-Length is at most BUFFERED_BODY), and only then hands it to one of its THREADS threads. So
an idle connection, or one sending its request slowly, holds no thread; it has REQUEST_TIMEOUT seconds from being
accepted (or from its first byte after a keep-alive pause) to send its request, after which it is answered 408
(problem+json) and closed. A head over MAX_HEAD_BYTES is answered 431. Kept-alive connections idle for KEEPALIVE
seconds are closed. A thread's own reads (a larger or chunked body) and writes (the response) wait IO_TIMEOUT
seconds at most each. gunicorn's own error answers (400, 414, 431, 500, ...) are problem+json, like the app's.

Connections spread over the workers. Every worker watches the one listening socket, and the worker that wins a
new connection keeps it (and its kept-alive requests): left alone, the worker that just served a request wins
nearly every time, and the 16 connections of a client pool, or of a proxy that keeps its connections alive, all
land on one worker while the others idle (half the throughput on two workers, measured). So a worker already
holding at least as many connections as it has threads lets a new one wait ACCEPT_DEFER seconds for each
connection beyond that (ACCEPT_DEFER_CAP at most) before it takes it, no longer watching the socket meanwhile: a
less busy worker takes it first; if none did, the deferring worker takes it when its wait is over. A single
worker never defers.

Configuration, lowest precedence first: tramita's settings below (DEFAULTS), a gunicorn configuration file
(`tramita serve -c FILE`, else TRAMITA_GUNICORN_CONFIG, else a `-c FILE` in GUNICORN_CMD_ARGS), GUNICORN_CMD_ARGS,
then `tramita serve --bind/--workers` when given. In production a reverse proxy (nginx, docs/nginx.conf) stands in
front: it buffers whole requests and answers slow and abusive clients itself.
"""

from __future__ import annotations

import errno
import selectors
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from functools import partial
from typing import Any

from gunicorn import util
from gunicorn.app.base import Application
from gunicorn.http2 import negotiation
from gunicorn.workers.gthread import STOP_KEEPALIVE_LINGER, TConn, ThreadWorker

#: Seconds a connection has, from being accepted (or from its first byte after a keep-alive pause), to send a
#: whole request (its head, and a body of up to BUFFERED_BODY bytes) before it is answered 408 and closed.
REQUEST_TIMEOUT = 10.0
#: A request head longer than this (bytes) is answered 431 without reading more.
MAX_HEAD_BYTES = 64 * 1024
#: A body of up to this many bytes (by its Content-Length) arrives before a thread takes the request; a larger or
#: chunked one is read by the thread, IO_TIMEOUT per read.
BUFFERED_BODY = 1024 * 1024
#: Seconds a thread waits on one read from or one write to a client.
IO_TIMEOUT = 10.0
#: Seconds an idle kept-alive connection stays open.
KEEPALIVE = 5
#: Threads per worker: requests a worker serves at once (each has arrived whole before it takes a thread).
THREADS = 4
#: Bytes read from a connection at a time while its request arrives.
READ_CHUNK = 64 * 1024
#: Seconds a worker holding `threads` connections or more lets a new one wait, per connection beyond that, for a
#: less busy worker to take it; and the longest such wait.
ACCEPT_DEFER = 0.002
ACCEPT_DEFER_CAP = 0.025

#: tramita's gunicorn settings (a configuration file, GUNICORN_CMD_ARGS and the command line override them).
DEFAULTS: dict[str, Any] = {
    "bind": "127.0.0.1:8000", "workers": 2, "worker_class": "api.serve.TramitaWorker", "threads": THREADS,
    "keepalive": KEEPALIVE, "timeout": 30, "accesslog": "-", "proc_name": "tramita-api",
    # gunicorn's control socket is one path per user: two servers (tests, a bench) would share it.
    "control_socket_disable": True,
}


class Gunicorn(Application):
    """gunicorn with tramita's app factory, configured as the module says (not from sys.argv)."""

    def __init__(self, overrides: dict[str, Any] | None = None, config_file: str | None = None) -> None:
        self.overrides, self.config_file = overrides or {}, config_file
        super().__init__()

    def load_config(self) -> None:
        for key, value in DEFAULTS.items():
            self.cfg.set(key, value)
        from_env = self.cfg.parser().parse_args(self.cfg.get_cmd_args_from_env())
        config_file = self.config_file or from_env.config
        if config_file:
            self.load_config_from_file(config_file)
        for key, value in vars(from_env).items():
            if value is not None and key != "args":
                self.cfg.set(key.lower(), value)
        for key, value in self.overrides.items():
            self.cfg.set(key, value)

    def load(self):  # noqa: ANN201 - gunicorn's hook, called in each worker
        from api.app import create_app

        return create_app()


def serve(bind: str | None = None, workers: int | None = None, *, config_file: str | None = None) -> None:
    """Run gunicorn until it is stopped (SIGTERM / Ctrl-C stop it gracefully); `bind` and `workers`, when given,
    override every other source of configuration."""
    overrides = {key: value for key, value in (("bind", bind), ("workers", workers)) if value is not None}
    Gunicorn(overrides, config_file).run()


# ---------------------------------------------------------------------------------------------- the worker


class BoundedSocket(socket.socket):
    """A client socket whose blocking mode waits IO_TIMEOUT seconds at most per read or write (gunicorn sets its
    sockets blocking before each request; each wait is bounded instead)."""

    def setblocking(self, flag: bool) -> None:
        if flag:
            self.settimeout(IO_TIMEOUT)
        else:
            super().setblocking(False)


class Connection(TConn):
    """A client connection and what has arrived of its next request, read off the threads."""

    def __init__(self, *args: Any) -> None:
        super().__init__(*args)
        self.received = bytearray()
        self.start = 0  # where the request line starts in `received` (empty lines before it skipped)
        self.scanned = 0  # bytes of `received` already searched for the end of the head
        self.expected: int | None = None  # once the head has ended: the bytes to wait for, head and body
        self.deadline = 0.0
        self.ready = False  # a whole request has arrived: a thread may take it
        self.data_ready = True  # so gunicorn's thread never waits for data itself

    def init(self) -> None:
        super().init()
        self.hand_over()

    def hand_over(self) -> None:
        """Give what has arrived to the HTTP parser, which reads it before the socket."""
        if self.received and self.parser is not None:
            self.parser.unreader.unread(bytes(self.received))
            self.received.clear()
            self.start = self.scanned = 0
            self.expected = None


WAIT, READY, TOO_LARGE = "wait", "ready", "too-large"


def arrival(connection: Connection) -> str:
    """Has a whole request arrived (READY), is more to come (WAIT), or is its head too large (TOO_LARGE)?

    Empty lines before the request line are skipped (RFC 9112, 2.2). The head ends at the first empty line. The
    work is incremental (each byte is looked at once), so a client sending a byte at a time costs no more.
    """
    received = connection.received
    if connection.expected is None:
        start = connection.start
        while start < len(received) and received[start] in b"\r\n":
            start += 1
        connection.start = start
        end = received.find(b"\r\n\r\n", max(start, connection.scanned - 3))
        if end < 0:
            connection.scanned = len(received)
            return TOO_LARGE if len(received) > MAX_HEAD_BYTES else WAIT
        if end + 4 > MAX_HEAD_BYTES:
            return TOO_LARGE
        connection.expected = end + 4 + buffered_body(bytes(received[start:end]))
    return READY if len(received) >= connection.expected else WAIT


def buffered_body(head: bytes) -> int:
    """The body's bytes to wait for before a thread takes the request: its length when a single, plain
    Content-Length of at most BUFFERED_BODY announces it; otherwise 0 (the parser, in the thread, reads any
    other framing, or refuses it)."""
    lengths, other_framing = set(), False
    for line in head.split(b"\r\n")[1:]:
        name, _, value = line.partition(b":")
        name = name.strip().lower()
        if name == b"content-length":
            lengths.add(value.strip())
        elif name == b"transfer-encoding":
            other_framing = True
    if other_framing or len(lengths) != 1 or not next(iter(lengths)).isdigit():
        return 0
    length = int(next(iter(lengths)))
    return length if length <= BUFFERED_BODY else 0


def problem_response(status: int, reason: str, detail: str) -> bytes:
    """A whole HTTP/1.1 answer carrying a problem+json body; the connection closes after it."""
    from api.errors import PROBLEM_JSON, problem_bytes

    body = problem_bytes(status, detail)
    head = (f"HTTP/1.1 {status} {reason}\r\nConnection: close\r\nContent-Type: {PROBLEM_JSON}\r\n"
            f"Content-Length: {len(body)}\r\n\r\n")
    return head.encode("latin-1") + body


def write_problem(sock: socket.socket, status_int: int, reason: str, mesg: str) -> None:
    """gunicorn's `util.write_error`, answering problem+json instead of HTML."""
    util.write_nonblock(sock, problem_response(status_int, reason, mesg or "the server could not handle the "
                                                                           "request; it was logged"))


class TramitaWorker(ThreadWorker):
    """gunicorn's gthread worker, with each request read whole on the event loop before a thread takes it (see
    the module's docstring). TLS and HTTP/2 prior knowledge, which tramita does not configure (a proxy terminates
    TLS), are served as gthread serves them."""

    def init_process(self) -> None:
        util.write_error = write_problem  # this worker process's own error answers are problem+json
        self._arriving: dict[Connection, None] = {}  # by deadline: each joins with now + REQUEST_TIMEOUT
        self._stop_deadline: float | None = None
        #: While a new connection is left for a less busy worker (see the module's docstring): until when.
        self._deferring_until: float | None = None
        super().init_process()

    def _reads_off_thread(self, client: Any) -> bool:
        return not self.cfg.is_ssl and not negotiation.prior_knowledge_allowed(self.cfg, client)

    def accept(self, listener: socket.socket) -> None:
        """A new connection is waiting: taken now, unless this worker is busy enough to leave it to another."""
        beyond = self.nr_conns - self.cfg.threads + 1
        if self.cfg.workers > 1 and beyond > 0:
            self._deferring_until = time.monotonic() + min(ACCEPT_DEFER_CAP, ACCEPT_DEFER * beyond)
            super().set_accept_enabled(False)
            return
        self._take(listener)

    def set_accept_enabled(self, enabled: bool) -> None:
        """gunicorn's loop enables accepting whenever it has room; not while a new connection is left to others."""
        super().set_accept_enabled(enabled and self._deferring_until is None)

    def wait_for_and_dispatch_events(self, timeout: float) -> None:
        """gunicorn's wait for events, woken when a deferral ends: then the connection still waiting, if no other
        worker took it, is taken here, and the socket is watched again."""
        if self._deferring_until is not None:
            left = self._deferring_until - time.monotonic()
            if left > 0:
                timeout = min(timeout, left)
            else:
                self._deferring_until = None
                if self.alive:  # stopping: gunicorn's loop no longer accepts
                    for listener in self.sockets:
                        self._take(listener)
                    self.set_accept_enabled(self.nr_conns < self.worker_connections)
        super().wait_for_and_dispatch_events(timeout)

    def _take(self, listener: socket.socket) -> None:
        try:
            raw, client = listener.accept()
        except OSError as error:
            if error.errno not in (errno.EAGAIN, errno.ECONNABORTED, errno.EWOULDBLOCK):
                raise
            return
        self.nr_conns += 1
        if not self._reads_off_thread(client):
            raw.setblocking(True)
            return super().enqueue_req(TConn(self.cfg, raw, client, listener.getsockname()))
        sock = BoundedSocket(raw.family, raw.type, raw.proto, fileno=raw.detach())
        self._await_request(Connection(self.cfg, sock, client, listener.getsockname()))

    def _await_request(self, connection: Connection) -> None:
        """Watch the connection until its request has arrived (or its time is up)."""
        connection.deadline = time.monotonic() + REQUEST_TIMEOUT
        self._arriving[connection] = None
        connection.sock.setblocking(False)
        self.poller.register(connection.sock, selectors.EVENT_READ, partial(self._on_readable, connection))
        if connection.received:  # pipelined behind the last request: it may be whole already
            self._judge(connection)

    def _on_readable(self, connection: Connection, _: Any) -> None:
        try:
            data = connection.sock.recv(READ_CHUNK)
        except (BlockingIOError, InterruptedError):
            return
        except OSError:
            data = b""
        if not data:  # the client went away
            return self._close(connection)
        connection.received += data
        self._judge(connection)

    def _judge(self, connection: Connection) -> None:
        state = arrival(connection)
        if state == TOO_LARGE:
            return self._close(connection, problem_response(
                431, "Request Header Fields Too Large", f"the request head is longer than {MAX_HEAD_BYTES} bytes"))
        if state == READY:
            self._leave(connection)
            connection.ready = True
            if connection.initialized:  # a kept-alive connection: its parser is there to take the bytes
                connection.hand_over()
            self.enqueue_req(connection)

    def enqueue_req(self, conn: TConn) -> None:
        if isinstance(conn, Connection) and not conn.ready:  # a request pipelined behind the last one
            conn.received[:0] = conn.parser.unreader.take_buffered()
            return self._await_request(conn)
        if isinstance(conn, Connection):
            conn.ready = False
        super().enqueue_req(conn)

    def on_client_socket_readable(self, conn: TConn, client: Any) -> None:
        """A kept-alive connection sends again: read its request here too."""
        if not isinstance(conn, Connection):
            return super().on_client_socket_readable(conn, client)
        self.poller.unregister(client)
        self.keepalived_conns.remove(conn)
        self._await_request(conn)
        self._on_readable(conn, client)

    def _leave(self, connection: Connection) -> None:
        self._arriving.pop(connection, None)
        try:
            self.poller.unregister(connection.sock)
        except (KeyError, ValueError, OSError):
            pass

    def _close(self, connection: Connection, answer: bytes = b"") -> None:
        self._leave(connection)
        if answer:
            try:
                connection.sock.send(answer)
                connection.sock.shutdown(socket.SHUT_WR)
            except OSError:
                pass
        self.nr_conns -= 1
        util.close(connection.sock)

    def murder_pending(self) -> None:
        """Also close the connections whose request has not arrived in time (all of them soon after a stop)."""
        super().murder_pending()
        now = time.monotonic()
        if not self.alive and self._stop_deadline is None:
            self._stop_deadline = now + STOP_KEEPALIVE_LINGER
        while self._arriving:
            connection = next(iter(self._arriving))
            deadline = min(connection.deadline, self._stop_deadline or connection.deadline)
            if deadline > now:
                break
            answer = problem_response(408, "Request Timeout", f"the request did not arrive within "
                                      f"{REQUEST_TIMEOUT:g} s") if connection.received else b""
            self._close(connection, answer)


# ---------------------------------------------------------------------------------------------- tramita up


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

