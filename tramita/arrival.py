"""A request arriving on a worker's event loop (tramita/serve.py): the connection and its bounded socket, whether the
head has ended, what it says of its body, whether the body has arrived whole. Each byte is looked at once, however
slowly the bytes come."""

from __future__ import annotations

import re
import socket
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from gunicorn.workers.gthread import TConn

#: A request head longer than this (bytes) is answered 431 without reading more.
MAX_HEAD_BYTES = 64 * 1024
#: The longest line of a chunked body's framing (a chunk's size and its extensions, or a trailer field).
MAX_CHUNK_LINE = 4096
#: Seconds a connection has, from being accepted (or from its first byte after a keep-alive pause), to send a
#: whole request (its head, and a body of up to tramita.serve.BUFFERED_BODY bytes) before it is answered 408.
REQUEST_TIMEOUT = 10.0
#: Seconds a thread waits on one write to a client.
IO_TIMEOUT = 10.0


class BoundedSocket(socket.socket):
    """A client socket whose blocking mode waits IO_TIMEOUT seconds at most per write (gunicorn sets its sockets
    blocking before each request; each wait is bounded instead), and whose reads by a thread end at `reads_until`:
    the worker sets it to the moment it hands the request over, whole, so a thread never waits on a read."""

    #: When a thread's reads of the current request must end (None: the loop reads, without blocking).
    reads_until: float | None = None

    def setblocking(self, flag: bool) -> None:
        if flag:
            self.settimeout(IO_TIMEOUT)
        else:
            super().setblocking(False)

    def recv(self, size: int, flags: int = 0) -> bytes:
        with self._bounded_read():
            return super().recv(size, flags)

    def recv_into(self, buffer: Any, size: int = 0, flags: int = 0) -> int:
        with self._bounded_read():
            return super().recv_into(buffer, size, flags)

    @contextmanager
    def _bounded_read(self) -> Iterator[None]:
        if self.reads_until is None or self.gettimeout() == 0.0:  # the loop's own, non-blocking reads
            yield
            return
        left = self.reads_until - time.monotonic()
        if left <= 0:
            raise TimeoutError("the request was not read within its time")
        self.settimeout(min(IO_TIMEOUT, left))
        try:
            yield
        finally:
            self.settimeout(IO_TIMEOUT)  # the answer's writes wait IO_TIMEOUT each again


class Connection(TConn):
    """A client connection and what has arrived of its next request, read off the threads."""

    def __init__(self, *args: Any) -> None:
        super().__init__(*args)
        self.received = bytearray()
        self.start = 0  # where the request line starts in `received` (empty lines before it skipped)
        self.scanned = 0  # bytes of `received` already searched for the end of the head
        self.expected: int | None = None  # once the head has ended: the bytes to wait for, head and body
        self.head_ended = False  # the head has arrived, and what it says of its body is known:
        self.declared = 0  # the body's Content-Length (0: none, or chunked)
        self.body_start = 0  # where the body begins in `received`, once the head has ended
        self.head_ended_at = 0.0  # when the head ended (time.monotonic())
        self.chunks: Chunks | None = None  # a chunked body's framing, read as it arrives
        self.continue_asked = False  # `Expect: 100-continue`
        self.admitted = False  # its body has been weighed against the worker's budget (BODY_BUDGET)
        self.reserved = 0  # the bytes of the budget it holds
        self.deadline = 0.0
        self.allowed = REQUEST_TIMEOUT  # the seconds its request has (more once a large body is coming)
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
            self.head_ended, self.declared, self.chunks, self.continue_asked = False, 0, None, False
            self.admitted = False


WAIT, READY, TOO_LARGE = "wait", "ready", "too-large"
BODY_TOO_LARGE, MALFORMED = "body-too-large", "malformed"


def arrival(connection: Any, largest: int) -> str:
    """Has a whole request arrived (READY), is more to come (WAIT), is its head too large (TOO_LARGE), its body
    larger than `largest` (BODY_TOO_LARGE), or its chunked framing broken (MALFORMED)?

    Empty lines before the request line are skipped (RFC 9112, 2.2). The head ends at the first empty line. The
    work is incremental (each byte is looked at once), so a client sending a byte at a time costs no more.
    """
    received = connection.received
    if not connection.head_ended:
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
        framing, length, connection.continue_asked = body_framing(bytes(received[start:end]))
        connection.head_ended, connection.body_start = True, end + 4
        if framing == CHUNKED:
            connection.chunks = Chunks(end + 4)
        else:
            if length > largest:
                return BODY_TOO_LARGE
            connection.declared = length
            connection.expected = end + 4 + length
    if connection.chunks is not None and connection.expected is None:
        state = connection.chunks.read(received, largest)
        if state != READY:
            return state
        connection.expected = connection.chunks.position
    return READY if len(received) >= connection.expected else WAIT


PLAIN, CHUNKED = "plain", "chunked"
#: A trailer field line: a token (RFC 9110, 5.6.2), a colon, then visible characters, spaces and tabs.
_FIELD_LINE = re.compile(rb"[!#$%&'*+\-.^_`|~0-9A-Za-z]+:[\t\x20-\x7e\x80-\xff]*")


def body_framing(head: bytes) -> tuple[str, int, bool]:
    """What the head says of its body, read as gunicorn's parser reads it (`Message.set_body_reader`), so that no
    body the parser would read is left for a thread to read from the socket: CHUNKED when the Transfer-Encoding
    list, over all its lines, ends with `chunked`; otherwise PLAIN with a single Content-Length's value (ASCII
    digits, any number of them; 0 without one). Any other framing (a Transfer-Encoding not ending in chunked, two
    Content-Lengths, one that is not digits) the parser refuses before reading a body: PLAIN 0. And whether the
    client waits for `100 Continue` (HTTP/1.1 `Expect: 100-continue`)."""
    lengths, encodings, expects = [], [], False
    for line in head.split(b"\r\n")[1:]:
        name, _, value = line.partition(b":")
        name = name.strip().lower()
        if name == b"content-length":
            lengths.append(value.strip())
        elif name == b"transfer-encoding":
            encodings += [coding.strip(b" \t").lower() for coding in value.split(b",")]
        elif name == b"expect":
            expects = value.strip().lower() == b"100-continue"
    expects = expects and head.split(b"\r\n", 1)[0].rstrip().endswith(b"HTTP/1.1")
    if encodings:
        return (CHUNKED if encodings[-1] == b"chunked" else PLAIN), 0, expects
    if len(lengths) != 1 or not lengths[0].isdigit() or not lengths[0].isascii():
        return PLAIN, 0, expects
    return PLAIN, int(lengths[0]), expects


class Chunks:
    """A chunked body's framing (RFC 9112, 7.1), read as its bytes arrive: each byte is looked at once."""

    _HEX = frozenset(b"0123456789abcdefABCDEF")

    def __init__(self, position: int) -> None:
        self.position = position  # where in the connection's bytes the framing is read on from
        self.phase = "size"  # size line, data, the CRLF after the data, trailer lines
        self.left = 0  # the current chunk's bytes still to come
        self.size = 0  # the body's bytes so far (the chunks' data, without the framing)
        self.trailer = 0  # the trailer section's bytes so far (at most MAX_HEAD_BYTES, as a head)

    def read(self, received: bytearray, largest: int) -> str:
        while True:
            if self.phase == "data":
                taken = min(self.left, len(received) - self.position)
                self.position += taken
                self.left -= taken
                if self.left:
                    return WAIT
                self.phase = "crlf"
            if self.phase == "crlf":
                if len(received) - self.position < 2:
                    return WAIT
                if received[self.position:self.position + 2] != b"\r\n":
                    return MALFORMED
                self.position += 2
                self.phase = "size"
            end = received.find(b"\r\n", self.position, self.position + MAX_CHUNK_LINE + 2)
            if end < 0:
                return MALFORMED if len(received) - self.position > MAX_CHUNK_LINE else WAIT
            line = bytes(received[self.position:end])
            self.position = end + 2
            if self.phase == "trailer":
                if not line:
                    return READY
                self.trailer += len(line) + 2
                if not _FIELD_LINE.fullmatch(line) or self.trailer > MAX_HEAD_BYTES:
                    return MALFORMED
                continue
            digits = line.split(b";", 1)[0].rstrip(b" \t")
            if not digits or len(digits) > 16 or not set(digits) <= self._HEX:
                return MALFORMED
            self.left = int(digits, 16)
            self.size += self.left
            if self.size > largest:
                return BODY_TOO_LARGE
            self.phase = "data" if self.left else "trailer"
