"""The production edge: docs/nginx.conf, as committed, in front of a real `tramita serve` (stock gunicorn). nginx
passes the API through, answers its own refusals as problem+json, and holds slow, idle and half-open clients
itself while a well-behaved client is answered; no smuggled request reaches the app.

The well-behaved client comes from ::1, the hostile ones from 127.0.0.1, so that nginx's per-address limits on
the latter leave the former alone, as they would for clients on other machines.

Needs an nginx binary (Debian: `apt-get install nginx-light`; `.ci/run` installs it): skipped without one, failed
when CI is set.
"""

from __future__ import annotations

import io
import json
import time
from collections.abc import Iterator
from contextlib import contextmanager, redirect_stdout
from dataclasses import dataclass
from pathlib import Path

import pytest

from tramita.cli import main
from tests.servers import (
    Proxy, Served, answers, idle_connections, in_ci, ipv6_loopback, nginx_binary, nginx_in_front, opened,
    raw_answer, raw_exchange, request, serving, stop, watch,
)

pytestmark = pytest.mark.slow

#: Seconds of nginx's client_header_timeout and client_body_timeout in docs/nginx.conf, and how long past them a
#: held connection may last (nginx's timers are coarse on a loaded machine).
HEADER_TIMEOUT, BODY_TIMEOUT, CLOSING_GRACE = 10.0, 10.0, 10.0
#: Seconds the well-behaved client's request may take while the hostile ones hold: generous for a loaded 2-core
#: machine, and still well short of the timeouts above that a starved server would make it wait.
ANSWER_SECONDS = 5.0
#: Hostile connections: slow heads and slow bodies; idle and half-open ones.
SLOW, IDLE = 100, 3000
#: Seconds the slow connections are held while the well-behaved client asks.
HOLD_SECONDS = 6.0


@dataclass
class Edge:
    """nginx in front of `tramita serve` on the demo, and an auditor's token."""

    proxy: Proxy
    server: Served
    token: str

    @property
    def port(self) -> int:
        return self.proxy.port

    def app_log(self) -> str:
        """gunicorn's output: its access log names every request that reached the app."""
        return self.server.output()

    def normal_request(self) -> None:
        """A well-behaved client reads a case, from ::1, and is answered 200 within ANSWER_SECONDS."""
        started = time.monotonic()
        status, _, body = request(f"{self.proxy.url}/cases/LC35-1991-0001", timeout=ANSWER_SECONDS,
                                  Authorization=f"Bearer {self.token}")
        assert status == 200, body[:300]
        assert time.monotonic() - started < ANSWER_SECONDS


@contextmanager
def edge_running(folder: Path, *, lift_address_limits: bool = False) -> Iterator[Edge]:
    """`tramita serve` (2 workers) on the demo in `folder`, nginx in front on free ports of 127.0.0.1 and ::1,
    its temporary files in `folder`; an auditor's token."""
    binary = nginx_binary()
    if binary is None or not ipv6_loopback():
        missing = "no nginx binary (Debian: apt-get install nginx-light)" if binary is None else "no ::1 on this host"
        if in_ci():
            pytest.fail(f"nginx tests: {missing}, and CI is set, so this is an error, not a skip", pytrace=False)
        pytest.skip(f"nginx tests: {missing}")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("TRAMITA_DATABASE_URL", f"sqlite:///{folder / 'tramita.sqlite'}")
        patch.setenv("TRAMITA_TRUSTED_PROXIES", "1")  # as docs/nginx.conf says to run tramita behind it
        with redirect_stdout(io.StringIO()):
            assert main(["migrate"]) == 0 and main(["seed-demo"]) == 0
        with redirect_stdout(io.StringIO()) as printed:
            assert main(["token", "create", "--role", "auditor", "--name", "Tribunal de Contas"]) == 0
        token = printed.getvalue().splitlines()[1]
        with serving(folder, "--workers", "2") as server:
            with nginx_in_front(folder / "nginx", server, binary, lift_address_limits=lift_address_limits) as proxy:
                yield Edge(proxy, server, token)


@pytest.fixture(scope="module")
def edge_shared(tmp_path_factory) -> Iterator[Edge]:
    """docs/nginx.conf as shipped, for the tests that leave it as they found it (each marks its own requests)."""
    with edge_running(tmp_path_factory.mktemp("edge")) as running:
        yield running


@pytest.fixture
def edge(tmp_path) -> Iterator[Edge]:
    """docs/nginx.conf as shipped, for one test alone (it stops the API, or fills nginx's limits for 127.0.0.1)."""
    with edge_running(tmp_path) as running:
        yield running


@pytest.fixture
def edge_for_many_addresses(tmp_path) -> Iterator[Edge]:
    """docs/nginx.conf without its per-address limits: what clients from as many addresses as connections meet."""
    with edge_running(tmp_path, lift_address_limits=True) as running:
        yield running


def problem_answers(raw: bytes) -> list[int]:
    """The statuses of the answers in `raw`, each of which must be problem+json."""
    found = answers(raw)
    assert found and all(headers["content-type"] == "application/problem+json" for _, headers, _ in found), raw[:300]
    return [status for status, _, _ in found]


# ---------------------------------------------------------------------------------------------- passing through


def test_nginx_passes_the_api_through_with_its_problems_and_its_headers(edge_shared):
    edge = edge_shared
    status, headers, body = request(f"{edge.proxy.url}/cases/LC35-1991-0001/verify",
                                    Authorization=f"Bearer {edge.token}")
    assert status == 200 and json.loads(body)["ok"] is True
    status, headers, body = request(f"{edge.proxy.url}/cases")
    assert status == 401 and headers["Content-Type"] == "application/problem+json"
    assert headers["WWW-Authenticate"] == 'Bearer realm="tramita"' and json.loads(body)["status"] == 401


def test_signing_in_is_limited_by_nginx_per_address_and_answered_429_in_problem_json(edge_shared):
    statuses = []
    for _ in range(30):  # no CSRF token: the app refuses each one it is passed (403), nginx counts them all
        status, headers, _ = request(f"{edge_shared.proxy.url}/sessao", "POST", {})
        statuses.append(status)
        if status == 429:
            assert headers["Content-Type"] == "application/problem+json"
    assert statuses[0] == 403 and statuses[-1] == 429, statuses
    assert request(f"{edge_shared.proxy.url}/health")[0] == 200  # the rest of the site is not held by it


def test_a_client_written_forwarded_address_is_never_the_one_whose_wrong_tokens_are_counted(edge_shared):
    # tramita runs with TRAMITA_TRUSTED_PROXIES=1 behind nginx: it reads the entry nginx appends (here the
    # loopback, which no one is counted for), not the one the client wrote first.
    url = f"{edge_shared.proxy.url}/cases"
    statuses = {request(url, Authorization="Bearer not-a-token", **{"X-Forwarded-For": "203.0.113.7"})[0]
                for _ in range(25)}
    assert statuses == {401}


def test_nginx_passes_a_document_upload_larger_than_an_act_and_refuses_one_over_the_document_limit(edge_shared):
    edge = edge_shared
    document = b"%PDF-1.4\n" + b"0" * (2 * 1024 * 1024)  # twice an act's limit, within a document's
    head = (f"POST /documents HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {edge.token}\r\nContent-Type: "
            f"application/pdf\r\nContent-Length: {len(document)}\r\nConnection: close\r\n\r\n").encode()
    status, problem = raw_answer("127.0.0.1", edge.port, head + document)
    assert status == 403 and problem["article"]  # tramita's answer (an auditor stores no document): passed through
    oversized = (b"POST /documents HTTP/1.1\r\nHost: x\r\nContent-Type: application/pdf\r\n"
                 b"Content-Length: 11000000\r\n\r\n")
    status, problem = raw_answer("127.0.0.1", edge.port, oversized)
    assert (status, problem["title"]) == (413, "Request Entity Too Large")


def test_nginx_says_in_problem_json_when_the_api_is_down(edge):
    assert stop(edge.server.process) == 0
    status, headers, body = request(f"{edge.proxy.url}/health")
    assert (status, headers["Content-Type"], json.loads(body)["title"]) == (502, "application/problem+json",
                                                                            "Bad Gateway")


# ---------------------------------------------------------------------------------------------- oversized


def test_oversized_request_lines_heads_and_bodies_are_refused_by_nginx_as_problem_json_before_the_app(edge_shared):
    """nginx's limits (8 KiB lines, 32 KiB of head, 1 MiB bodies) refuse first: gunicorn's are set above them. A
    request line or header line at nginx's limit still reaches the app."""
    edge = edge_shared
    answer = lambda data: raw_answer("127.0.0.1", edge.port, data)  # noqa: E731
    line = b"GET /too-long-" + b"a" * (8191 - 23) + b" HTTP/1.1"
    assert len(line) == 8191
    status, problem = answer(line + b"\r\nHost: x\r\n\r\n")
    assert (status, problem["status"], problem["title"]) == (414, 414, "Request-URI Too Long")
    at_limit = b"GET /at-limit-" + b"a" * (8190 - 23) + b" HTTP/1.1"
    assert answer(at_limit + b"\r\nHost: x\r\nConnection: close\r\n\r\n")[0] == 404  # the app's: passed through
    status, problem = answer(b"GET /too-long-field HTTP/1.1\r\nHost: x\r\nX-Big: " + b"b" * (8191 - 7) + b"\r\n\r\n")
    assert (status, problem["title"]) == (431, "Request Header Fields Too Large")
    field = b"X-Big: " + b"b" * (8189 - 7)
    assert answer(b"GET /field-at-limit HTTP/1.1\r\nHost: x\r\n" + field + b"\r\nConnection: close\r\n\r\n")[0] == 404
    many = b"".join(b"X-%d: %s\r\n" % (n, b"c" * 1000) for n in range(40))
    status, problem = answer(b"GET /too-many HTTP/1.1\r\nHost: x\r\n" + many + b"\r\n")
    assert (status, problem["title"]) == (431, "Request Header Fields Too Large")
    post = b"POST /cases?oversized HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
    status, problem = answer(post + b"Content-Length: 2000000\r\n\r\n")
    assert (status, problem["title"]) == (413, "Request Entity Too Large")
    chunked = post + b"Transfer-Encoding: chunked\r\n\r\n" + (b"10000\r\n" + b"[" * 0x10000 + b"\r\n") * 17
    status, problem = answer(chunked + b"0\r\n\r\n")
    assert (status, problem["title"]) == (413, "Request Entity Too Large")
    status, problem = answer(b"NOT HTTP\r\n\r\n")
    assert (status, problem["type"]) == (400, "https://tramita.ac.gov.br/problems/bad-request")
    log = edge.app_log()
    assert "/at-limit-" in log and "/field-at-limit" in log
    assert not any(path in log for path in ("/too-long", "/too-many", "oversized"))


def test_a_request_nginx_passes_and_gunicorn_refuses_is_answered_by_gunicorn_without_reaching_the_app(edge_shared):
    """More than 100 header fields (gunicorn's limit_request_fields; nginx counts bytes, not fields), or a control
    character in a header value: gunicorn's own refusal, in its own format (no public way to change it)."""
    edge = edge_shared
    fields = b"".join(b"X-%d: a\r\n" % n for n in range(150))
    (status, _, _), = answers(raw_exchange("127.0.0.1", edge.port, b"GET /fields HTTP/1.1\r\nHost: x\r\n" + fields
                                           + b"Connection: close\r\n\r\n"))
    assert status == 431
    (status, _, _), = answers(raw_exchange("127.0.0.1", edge.port, b"GET /control HTTP/1.1\r\nHost: x\r\n"
                                           b"X-Y: a\x01b\r\nConnection: close\r\n\r\n"))
    assert status == 400
    assert "/fields" not in edge.app_log() and "/control" not in edge.app_log()


# ---------------------------------------------------------------------------------------------- smuggling

def smuggling(case: str, framing: bytes) -> bytes:
    """A POST whose framing is `framing`, marked with `case`: HIDDEN in it is a GET of /smuggled-<case>."""
    hidden = HIDDEN.replace(b"/smuggled", b"/smuggled-" + case.encode())
    return (b"POST /cases?" + case.encode() + b" HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
            + framing.replace(b"HIDDEN", hidden).replace(b"LENGTH", b"%d" % len(hidden))
            .replace(b"CHUNKED", b"%d" % (5 + len(hidden))))


#: A request hidden behind a body: were the app to see it, its access log would name /smuggled-<case>.
HIDDEN = b"GET /smuggled HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"


#: Ambiguous framings, each with the status nginx refuses it with: (case, framing, status).
AMBIGUOUS = [
    ("cl-and-te", b"Content-Length: CHUNKED\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\nHIDDEN", 400),
    ("two-cl", b"Content-Length: 0\r\nContent-Length: LENGTH\r\n\r\nHIDDEN", 400),
    ("cl-list", b"Content-Length: LENGTH, LENGTH\r\n\r\nHIDDEN", 400),
    ("cl-plus", b"Content-Length: +2\r\n\r\n{}HIDDEN", 400),
    ("te-space-before-colon", b"Transfer-Encoding : chunked\r\nContent-Length: CHUNKED\r\n\r\n0\r\n\r\nHIDDEN", 400),
    ("te-obs-fold", b"Content-Length: CHUNKED\r\nTransfer-Encoding: identity\r\n chunked\r\n\r\n0\r\n\r\nHIDDEN", 400),
    ("two-te", b"Transfer-Encoding: chunked\r\nTransfer-Encoding: identity\r\n\r\n0\r\n\r\nHIDDEN", 400),
    ("te-unknown", b"Transfer-Encoding: xchunked\r\nContent-Length: LENGTH\r\n\r\nHIDDEN", 501),
    ("te-list", b"Transfer-Encoding: identity, chunked\r\n\r\n0\r\n\r\nHIDDEN", 501),
    ("chunk-size-0x", b"Transfer-Encoding: chunked\r\n\r\n0x2\r\n{}\r\n0\r\n\r\nHIDDEN", 400),
    ("chunk-size-overflow", b"Transfer-Encoding: chunked\r\n\r\nFFFFFFFFFFFFFFFFF2\r\n{}\r\n0\r\n\r\nHIDDEN", 400),
    ("obs-fold", b"X-Fold: a\r\n b\r\nContent-Length: LENGTH\r\n\r\nHIDDEN", 400),
]


@pytest.mark.parametrize(("case", "framing", "status"), [pytest.param(*entry, id=entry[0]) for entry in AMBIGUOUS])
def test_an_ambiguously_framed_request_is_refused_by_nginx_and_nothing_of_it_reaches_the_app(edge_shared, case,
                                                                                             framing, status):
    edge = edge_shared
    assert problem_answers(raw_exchange("127.0.0.1", edge.port, smuggling(case, framing))) == [status]
    edge.normal_request()  # after it: the app has answered this one, and logged nothing of the refused one
    log = edge.app_log()
    assert f"/smuggled-{case} " not in log and f"/cases?{case} " not in log


def test_a_request_pipelined_after_a_body_is_passed_as_nginx_read_it_and_no_more(edge_shared):
    """Chunk lines ended by a bare LF (which nginx reads): the request behind the body is nginx's second request,
    passed on its own upstream connection, not one the app could read differently; each reaches it once."""
    edge = edge_shared
    data = smuggling("bare-lf", b"Transfer-Encoding: chunked\r\n\r\n2\n{}\n0\n\nHIDDEN")
    assert problem_answers(raw_exchange("127.0.0.1", edge.port, data)) == [401, 404]
    deadline, access_log = time.monotonic() + 30, edge.proxy.folder / "access.log"
    marks = ('"GET /smuggled-bare-lf ', '"POST /cases?bare-lf ')
    while not all(mark in text for mark in marks for text in (edge.app_log(), access_log.read_text())):
        assert time.monotonic() < deadline, (edge.app_log()[-2000:], access_log.read_text())
        time.sleep(0.1)  # both logs are written just after the answers
    log, access = edge.app_log(), access_log.read_text()
    assert all(log.count(mark) == access.count(mark) == 1 for mark in marks)


# ---------------------------------------------------------------------------------------------- slow and idle

#: The head of a request whose body of 100,000 bytes is to come slowly, and its first byte.
SLOW_BODY = (b"POST /cases?slow-body HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
             b"Content-Length: 100000\r\n\r\n{")


def test_a_hundred_slow_heads_leave_a_normal_request_answered_until_nginx_drops_them_at_its_header_timeout(edge):
    """Heads sent a line at a time, for longer than client_header_timeout: nginx times the whole head, so it
    closes them all, and meanwhile a well-behaved client is answered each time; none reaches the app."""
    slow = opened("127.0.0.1", edge.port, SLOW, b"GET /slow-head HTTP/1.1\r\nHost: x\r\n")
    started = time.monotonic()
    watched = watch(slow, HEADER_TIMEOUT + CLOSING_GRACE, edge.normal_request, trickle=b"X-Slow: 1\r\n",
                    until_closed=True)
    assert time.monotonic() - started >= HEADER_TIMEOUT - 1.0  # held until the timeout, not refused at once
    assert watched.rounds >= 10  # the well-behaved client was answered all along
    assert "/slow-head" not in edge.app_log()


def test_a_hundred_slow_bodies_from_one_address_meet_its_limits_and_leave_others_answered(edge):
    """From one address, nginx holds at most 32 requests at once (limit_conn) and answers the rest 429; a
    well-behaved client from another address is answered all along; no slow body reaches the app."""
    watched = watch(opened("127.0.0.1", edge.port, SLOW, SLOW_BODY), HOLD_SECONDS, edge.normal_request,
                    trickle=b" ")
    refused = [raw for raw in watched.heard.values() if raw]
    assert all(problem_answers(raw) == [429] for raw in refused)
    assert SLOW - 32 <= len(refused) < SLOW  # the others held, as nginx holds a slow upload
    assert watched.rounds >= 10
    assert "slow-body" not in edge.app_log()


def test_a_hundred_slow_bodies_are_all_held_by_nginx_and_dropped_when_they_stall(edge_for_many_addresses):
    """Without the per-address limits (clients from many addresses), nginx holds all of the slow bodies, a byte
    at a time, while a well-behaved client is answered; once they stall, nginx closes each (without an answer)
    after client_body_timeout. No slow body ever reaches the app."""
    edge = edge_for_many_addresses
    slow = opened("127.0.0.1", edge.port, SLOW, SLOW_BODY)
    held = watch(slow, HOLD_SECONDS, edge.normal_request, trickle=b" ")
    assert held.heard == {} and held.closed == set() and held.rounds >= 10  # nginx answered none: it holds them
    slow, started = opened("127.0.0.1", edge.port, SLOW, SLOW_BODY), time.monotonic()
    dropped = watch(slow, BODY_TIMEOUT + CLOSING_GRACE, edge.normal_request, until_closed=True)
    assert time.monotonic() - started >= BODY_TIMEOUT - 1.0 and dropped.heard == {}
    assert "slow-body" not in edge.app_log()


def test_thousands_of_idle_and_half_open_connections_leave_a_normal_request_answered_until_nginx_closes_them(edge):
    connections = idle_connections("127.0.0.1", edge.port, IDLE)
    watched = watch(connections, HEADER_TIMEOUT + CLOSING_GRACE, edge.normal_request, until_closed=True)
    assert len(watched.closed) == IDLE and watched.rounds >= 5
