"""Serving: gunicorn in front of `create_app()` (`tramita up`, which runs the whole system side by side, is
tramita/side_by_side.py).

Each gunicorn worker builds its own application after the fork (one application per process; no preloading,
so no database connection is shared across a fork).

Slow clients. The workers are gunicorn's threaded workers (`gthread`) with the request read off the threads:
`TramitaWorker` keeps every connection on its event loop until a whole request has arrived, its head and its body
(by its Content-Length, or chunked to its last chunk, framings read as gunicorn's parser reads them:
tramita/arrival.py), and only then hands it to one of its THREADS threads, which never waits on a read. So an idle
connection, or one sending its request slowly, holds no thread. It has REQUEST_TIMEOUT seconds from being accepted
(or from its first byte after a keep-alive pause) to send its head and a body of up to BUFFERED_BODY bytes; a
larger or chunked body has REQUEST_TIMEOUT seconds from the head's end and earns more as it comes (MIN_BODY_RATE),
up to BODY_SECONDS. Past its time it is answered 408 (problem+json) and closed. A head over MAX_HEAD_BYTES is
answered 431, a body larger than the largest the app takes (TRAMITA_MAX_BODY_BYTES, TRAMITA_MAX_DOCUMENT_BYTES)
413 before it is read, a chunked body whose framing is broken 400. The bodies on a worker, from their first byte
until their request is answered, may hold BODY_BUDGET bytes in all (what has arrived, framing included): past
that the request whose body would exceed it is answered 503 with Retry-After, so slow or many bodies cannot
exhaust the memory, while requests without one are still read. A client that sends `Expect: 100-continue` is told
to go on by the loop, once. Kept-alive connections idle for KEEPALIVE seconds are closed. A thread waits
IO_TIMEOUT seconds at most on a write of the answer. gunicorn's own error answers (400, 414, 431, 500, ...) are
problem+json, like the app's.

Connections spread over the workers. Every worker watches the one listening socket, and the worker that wins a
new connection keeps it (and its kept-alive requests): left alone, the worker that just served a request wins
nearly every time, and the 16 connections of a client pool, or of a proxy that keeps its connections alive, all
land on one worker while the others idle (half the throughput on two workers, measured). So a worker already
holding at least as many connections as it has threads lets a new one wait ACCEPT_DEFER seconds for each
connection beyond that (ACCEPT_DEFER_CAP at most) before it takes it, no longer watching the socket meanwhile: a
less busy worker takes it first; if none did, the deferring worker takes every connection then waiting, so that
a flood of new connections delays the others by ACCEPT_DEFER_CAP at most. A single worker never defers. A worker
close to its `worker_connections` closes the connection that has waited longest for its request to arrive (with
408 when it had sent part of one) to take a new one: idle connections cannot fill it and leave the rest waiting.

Configuration, lowest precedence first: tramita's settings below (DEFAULTS), a gunicorn configuration file
(`tramita serve -c FILE`, else TRAMITA_GUNICORN_CONFIG, else a `-c FILE` in GUNICORN_CMD_ARGS), GUNICORN_CMD_ARGS,
then `tramita serve --bind/--workers` when given. In production a reverse proxy (nginx, docs/nginx.conf) stands in
front: it buffers whole requests and answers slow and abusive clients itself.
"""

from __future__ import annotations

import errno
import heapq
import itertools
import os
import selectors
import socket
import time
from functools import partial
from typing import Any

from gunicorn import util
from gunicorn.app.base import Application
from gunicorn.http2 import negotiation
from gunicorn.workers.gthread import STOP_KEEPALIVE_LINGER, TConn, ThreadWorker

from tramita.arrival import (
    BODY_TOO_LARGE, MALFORMED, MAX_HEAD_BYTES, READY, REQUEST_TIMEOUT, TOO_LARGE, BoundedSocket,
    Connection, arrival,
)

#: A body of up to this many bytes (by its Content-Length) arrives within REQUEST_TIMEOUT; a larger or chunked one
#: has BODY_SECONDS from the head's end. Either arrives whole before a thread takes the request.
BUFFERED_BODY = 1024 * 1024
#: Seconds a body larger than BUFFERED_BODY, or chunked, has from the end of the head to arrive whole (the
#: documents' upload time, api/documents.py).
BODY_SECONDS = 60.0
#: Bytes the bodies arriving at once on one worker may hold in all (their Content-Lengths, or what a chunked one
#: has sent); past that, a request with a body is answered 503 with Retry-After.
BODY_BUDGET = 64 * 1024 * 1024
#: Bytes a second a large or chunked body earns more time by, after its first REQUEST_TIMEOUT seconds.
MIN_BODY_RATE = 32 * 1024
#: Seconds a connection answered before its request was read (413, 503, 408, 431, 400) has its input read and
#: dropped before it is closed, so that closing does not reset it and lose the answer.
LINGER_SECONDS = 2.0
#: Seconds a client answered 503 for the budget is asked to wait before it tries again.
BUSY_RETRY_AFTER = 2
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
#: The most connections a worker takes at once when its deferral ends (the loop then serves the others' events).
ACCEPT_BURST = 256

#: tramita's gunicorn settings (a configuration file, GUNICORN_CMD_ARGS and the command line override them).
DEFAULTS: dict[str, Any] = {
    "bind": "127.0.0.1:8000", "workers": 2, "worker_class": "tramita.serve.TramitaWorker", "threads": THREADS,
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
        from tramita.web import create_app

        return create_app()


def serve(bind: str | None = None, workers: int | None = None, *, config_file: str | None = None) -> None:
    """Run gunicorn until it is stopped (SIGTERM / Ctrl-C stop it gracefully); `bind` and `workers`, when given,
    override every other source of configuration."""
    overrides = {key: value for key, value in (("bind", bind), ("workers", workers)) if value is not None}
    Gunicorn(overrides, config_file).run()


# ---------------------------------------------------------------------------------------------- the worker


def problem_response(status: int, reason: str, detail: str, *, field: str | None = None,
                     headers: dict[str, str] | None = None) -> bytes:
    """A whole HTTP/1.1 answer carrying a problem+json body; the connection closes after it."""
    from api.errors import PROBLEM_JSON, problem_bytes

    body = problem_bytes(status, detail, field=field)
    extra = "".join(f"{name}: {value}\r\n" for name, value in (headers or {}).items())
    head = (f"HTTP/1.1 {status} {reason}\r\nConnection: close\r\nContent-Type: {PROBLEM_JSON}\r\n{extra}"
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
        from api.app import settings_from

        util.write_error = write_problem  # this worker process's own error answers are problem+json
        settings = settings_from({k: v for k, v in os.environ.items() if k.startswith("TRAMITA_")})
        #: The largest body the app takes (a JSON body's limit, or a document's): a larger one is 413 at once.
        self._largest_body = max(settings["max_body_bytes"], settings["max_document_bytes"])
        self._arriving: dict[Connection, None] = {}  # the connections whose request is arriving, oldest first
        self._deadlines: list[tuple[float, int, Connection]] = []  # a heap; an entry whose deadline moved is stale
        self._entries = itertools.count()
        self._reserved = 0  # of BODY_BUDGET, by the bodies arriving
        self._stop_deadline: float | None = None
        self._lingering: dict[Connection, float] = {}  # answered and closing: until when their input is dropped
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
                    for listener in self.sockets:  # every connection waiting, not one: a flood waits no longer
                        for _ in range(ACCEPT_BURST):
                            if self.nr_conns >= self.worker_connections or not self._take(listener):
                                break
                    self.set_accept_enabled(self.nr_conns < self.worker_connections)
        super().wait_for_and_dispatch_events(timeout)

    def _take(self, listener: socket.socket) -> bool:
        """Accept one connection (False: none was waiting)."""
        try:
            raw, client = listener.accept()
        except OSError as error:
            if error.errno not in (errno.EAGAIN, errno.ECONNABORTED, errno.EWOULDBLOCK):
                raise
            return False
        self.nr_conns += 1
        if self.nr_conns >= self.worker_connections - 1 and self._arriving:
            self._evict()
        if not self._reads_off_thread(client):
            raw.setblocking(True)
            super().enqueue_req(TConn(self.cfg, raw, client, listener.getsockname()))
            return True
        sock = BoundedSocket(raw.family, raw.type, raw.proto, fileno=raw.detach())
        self._await_request(Connection(self.cfg, sock, client, listener.getsockname()))
        return True

    def _evict(self) -> None:
        """Room for a new connection: the one that has waited longest for its request to arrive is closed (408 when
        it had sent part of one), so that idle connections never fill the worker."""
        silent = next((connection for connection in self._arriving if not connection.received), None)
        oldest = silent or next(iter(self._arriving))
        self._close(oldest, self._timeout_answer(oldest), linger=False)  # its room is needed now

    def _await_request(self, connection: Connection) -> None:
        """Watch the connection until its request has arrived (or its time is up)."""
        self._arriving[connection] = None
        connection.allowed = REQUEST_TIMEOUT
        self._set_deadline(connection, time.monotonic() + REQUEST_TIMEOUT)
        connection.sock.setblocking(False)
        self.poller.register(connection.sock, selectors.EVENT_READ, partial(self._on_readable, connection))
        if connection.received:  # pipelined behind the last request: it may be whole already
            self._judge(connection)

    def _set_deadline(self, connection: Connection, deadline: float) -> None:
        connection.deadline = deadline
        heapq.heappush(self._deadlines, (deadline, next(self._entries), connection))
        if len(self._deadlines) > 2 * len(self._arriving) + 64:  # mostly stale entries: keep only the live ones
            self._deadlines = [(c.deadline, next(self._entries), c) for c in self._arriving]
            heapq.heapify(self._deadlines)

    @staticmethod
    def _receive(connection: Connection) -> bytes | None:
        """What the connection has sent (b"": it is gone); None when a read would block after all."""
        try:
            return connection.sock.recv(READ_CHUNK)
        except (BlockingIOError, InterruptedError):
            return None
        except OSError:
            return b""

    def _on_readable(self, connection: Connection, _: Any) -> None:
        data = self._receive(connection)
        if data is None:
            return
        if not data:  # the client went away
            return self._close(connection)
        connection.received += data
        self._judge(connection)

    def _judge(self, connection: Connection) -> None:
        state = arrival(connection, self._largest_body)
        if state == TOO_LARGE:
            return self._close(connection, problem_response(
                431, "Request Header Fields Too Large", f"the request head is longer than {MAX_HEAD_BYTES} bytes"))
        if state == BODY_TOO_LARGE:
            return self._close(connection, problem_response(
                413, "Content Too Large", f"the body is larger than {self._largest_body:,} bytes, the most this "
                "server reads (TRAMITA_MAX_BODY_BYTES, TRAMITA_MAX_DOCUMENT_BYTES)", field="body"))
        if state == MALFORMED:
            return self._close(connection, problem_response(
                400, "Bad Request", "the chunked body's framing is malformed (RFC 9112, 7.1)", field="body"))
        if connection.head_ended and not self._weigh(connection):
            return self._close(connection, problem_response(
                503, "Service Unavailable", f"the server is receiving {BODY_BUDGET:,} bytes of bodies already; "
                f"send this one again in {BUSY_RETRY_AFTER} s", headers={"Retry-After": str(BUSY_RETRY_AFTER)}))
        if state == READY:
            self._leave(connection)
            connection.ready = True
            if connection.initialized:  # a kept-alive connection: its parser is there to take the bytes
                connection.hand_over()
            self.enqueue_req(connection)

    def _weigh(self, connection: Connection) -> bool:
        """Once its head has arrived: may the request's body go on arriving within the worker's budget?

        The budget holds the bytes of the body that have arrived (its framing included), not what its head
        announces: heads announcing large bodies hold none of it. A large or chunked body has REQUEST_TIMEOUT from
        the head's end, and more as it comes, at MIN_BODY_RATE, up to BODY_SECONDS in all: one that stops coming is
        answered 408 and frees what it held. On its first weighing a body still to come is told `100 Continue` when
        its client waits for it."""
        now, body = time.monotonic(), len(connection.received) - connection.body_start
        if not connection.admitted:
            connection.admitted, connection.head_ended_at = True, now
            if connection.chunks is not None or connection.declared > BUFFERED_BODY:
                connection.allowed = BODY_SECONDS
                self._set_deadline(connection, now + REQUEST_TIMEOUT + body / MIN_BODY_RATE)
            if connection.continue_asked and not body and (connection.chunks is not None or connection.declared):
                try:
                    connection.sock.send(b"HTTP/1.1 100 Continue\r\n\r\n")
                except OSError:
                    pass  # the client is gone: its next read says so
        elif connection.allowed == BODY_SECONDS:
            earned = min(connection.head_ended_at + BODY_SECONDS,
                         connection.head_ended_at + REQUEST_TIMEOUT + body / MIN_BODY_RATE)
            if earned >= connection.deadline + 1.0:  # a second more at least: the heap is not pushed per read
                self._set_deadline(connection, earned)
        more = body - connection.reserved
        if more > 0:
            if self._reserved + more > BODY_BUDGET:
                return False
            self._reserved += more
            connection.reserved += more
        return True

    def _release(self, connection: Connection) -> None:
        """Give back the budget the connection's body held (once its request is answered, or it is closed)."""
        self._reserved -= connection.reserved
        connection.reserved = 0

    def finish_request(self, conn: TConn, fs: Any) -> None:
        """A thread has answered: the body it was given no longer weighs on the budget."""
        if isinstance(conn, Connection):
            self._release(conn)
        super().finish_request(conn, fs)

    def handle_request(self, req: Any, conn: TConn) -> Any:
        """The loop has read the whole body before, and told a client waiting for it to go on: gunicorn is not to
        send `100 Continue` again."""
        if isinstance(conn, Connection):
            req._expected_100_continue = False
        return super().handle_request(req, conn)

    def enqueue_req(self, conn: TConn) -> None:
        if isinstance(conn, Connection) and not conn.ready:  # a request pipelined behind the last one
            conn.received[:0] = conn.parser.unreader.take_buffered()
            return self._await_request(conn)
        if isinstance(conn, Connection):
            conn.ready = False
            conn.sock.reads_until = time.monotonic()  # the request is here whole: a thread never waits on a read
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

    def _close(self, connection: Connection, answer: bytes = b"", *, linger: bool = True) -> None:
        """Close the connection, after `answer` when there is one. A client may still be sending what the answer
        refuses (a body too large, or past the budget): closing with its bytes unread would reset the connection and
        could lose the answer, so its bytes are read and dropped for LINGER_SECONDS at most before closing."""
        self._leave(connection)
        self._release(connection)
        connection.received = bytearray()  # its heap entry may outlive it until its deadline: not its bytes
        if answer:
            try:
                connection.sock.send(answer)
                connection.sock.shutdown(socket.SHUT_WR)
            except OSError:
                pass
            else:
                if not linger:
                    return self._end(connection)
                self._lingering[connection] = time.monotonic() + LINGER_SECONDS
                self.poller.register(connection.sock, selectors.EVENT_READ, partial(self._drop_input, connection))
                return
        self._end(connection)

    def _drop_input(self, connection: Connection, _: Any) -> None:
        if self._receive(connection) == b"":
            self._end_lingering(connection)

    def _end_lingering(self, connection: Connection) -> None:
        if self._lingering.pop(connection, None) is None:
            return
        try:
            self.poller.unregister(connection.sock)
        except (KeyError, ValueError, OSError):
            pass
        self._end(connection)

    def _end(self, connection: Connection) -> None:
        self.nr_conns -= 1
        util.close(connection.sock)

    def murder_pending(self) -> None:
        """Also close the connections whose request has not arrived in time (all of them soon after a stop)."""
        super().murder_pending()
        now = time.monotonic()
        if not self.alive and self._stop_deadline is None:
            self._stop_deadline = now + STOP_KEEPALIVE_LINGER
        for connection in [c for c, until in self._lingering.items() if until <= now]:
            self._end_lingering(connection)
        if self._stop_deadline is not None and now >= self._stop_deadline:
            while self._arriving:
                connection = next(iter(self._arriving))
                self._close(connection, self._timeout_answer(connection))
        while self._deadlines and self._deadlines[0][0] <= now:
            deadline, _, connection = heapq.heappop(self._deadlines)
            if connection in self._arriving and connection.deadline == deadline:  # else: moved, or arrived
                self._close(connection, self._timeout_answer(connection))
        if not self._arriving:
            self._deadlines.clear()

    @staticmethod
    def _timeout_answer(connection: Connection) -> bytes:
        """408 to a connection that had sent part of a request; nothing to one that had sent nothing."""
        if not connection.received:
            return b""
        return problem_response(408, "Request Timeout", f"the request did not arrive within {connection.allowed:g} s")
