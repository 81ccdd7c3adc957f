"""Tokens from the command line, and the API served by gunicorn as `tramita serve` runs it: idle and slow
connections hold no worker, gunicorn's own refusals are problem+json, its settings come from where they should."""

from __future__ import annotations

import http.client
import json
import socket
import time
from datetime import datetime
from functools import partial
from http import HTTPStatus

import pytest

from tramita.cli import main
from tramita.serve import BODY_BUDGET, BUFFERED_BODY, MAX_HEAD_BYTES, REQUEST_TIMEOUT, THREADS, Gunicorn
from domain.application import LEGAL_TIMEZONE
from tests.servers import START_SECONDS, connections_by_worker, idle_connections, raw_answer, request, serving, until_closed

IDLE_CONNECTIONS = 50
#: Seconds past REQUEST_TIMEOUT by which the server has closed an idle connection (its loop looks every second).
CLOSING_GRACE = 10.0


@pytest.fixture
def database(tmp_path, monkeypatch):  # noqa: ANN201
    url = f"sqlite:///{tmp_path / 'var' / 'tramita.sqlite'}"
    monkeypatch.setenv("TRAMITA_DATABASE_URL", url)
    return url


def created_token(capsys, *args: str) -> tuple[str, str]:  # noqa: ANN001
    assert main(["token", "create", *args]) == 0
    lines = capsys.readouterr().out.splitlines()
    return lines[0].split()[1], lines[1]


def test_a_token_is_printed_once_listed_without_its_secret_and_revoked_by_its_id(database, capsys):
    main(["migrate"])
    main(["seed-demo"])
    capsys.readouterr()
    token_id, token = created_token(capsys, "--role", "mayor", "--municipality", "1200302", "--name", "Prefeita")
    assert token.startswith(f"trm_{token_id.replace('-', '')}_")
    assert main(["token", "list"]) == 0
    listed = capsys.readouterr().out
    assert token_id in listed and "mayor" in listed and "1200302" in listed and token not in listed
    assert main(["token", "revoke", token_id, "--reason", "term ended"]) == 0
    assert main(["token", "list"]) == 0
    assert "revoked 2" in capsys.readouterr().out


@pytest.mark.parametrize(("args", "fault"), [
    (["--role", "mayor", "--name", "x"], "municipality: a mayor token acts for one municipality"),
    (["--role", "tre", "--municipality", "1200302", "--name", "x"], "municipality: a tre token does not act"),
    (["--role", "emperor", "--name", "x"], "role: 'emperor' is not a competent body"),
    (["--role", "council", "--municipality", "9999999", "--name", "x"], "no municipality 9999999"),
])
def test_a_token_for_a_role_or_municipality_the_law_does_not_know_is_refused(database, capsys, args, fault):
    main(["migrate"])
    main(["seed-demo"])
    capsys.readouterr()
    assert main(["token", "create", *args]) == 2
    assert fault in capsys.readouterr().err


@pytest.mark.slow
def test_serve_migrates_then_answers_over_gunicorn_and_stops_cleanly_on_sigterm(database, capsys, tmp_path):
    main(["migrate"])
    main(["seed-demo"])
    capsys.readouterr()
    _, token = created_token(capsys, "--role", "auditor", "--name", "Tribunal de Contas")
    with serving(tmp_path, "--workers", "2") as server:
        status, _, body = request(f"{server.url}/cases/LC35-1991-0001/verify", Authorization=f"Bearer {token}")
        assert status == 200 and json.loads(body)["ok"] is True
        status, headers, _ = request(f"{server.url}/cases")
        assert status == 401 and headers["Content-Type"] == "application/problem+json"
    assert server.process.returncode == 0, server.output()
    assert "migrated: event store ready" in server.output()


@pytest.mark.slow
def test_fifty_idle_connections_leave_health_and_acts_answering_within_a_second_until_the_server_closes_them(
        database, capsys, tmp_path):
    main(["migrate"])
    main(["seed-demo"])
    capsys.readouterr()
    _, token = created_token(capsys, "--role", "assembly-mesa", "--name", "Mesa Diretora")
    act = {"occurred_on": datetime.now(LEGAL_TIMEZONE).date().isoformat(), "body": "ibge", "items": ["art-4-I"]}
    with serving(tmp_path, "--workers", "2") as server:
        idle = idle_connections(server.host, server.port, IDLE_CONNECTIONS)

        def health_and_an_act_answer_within_a_second() -> None:
            assert request(f"{server.url}/health", timeout=1.0)[0] == 200
            status, _, body = request(f"{server.url}/cases/LC35-2026-0003/acts/requisition-issued", "POST", act,
                                      timeout=1.0, Authorization=f"Bearer {token}", **{"If-Match": "*"})
            assert status == 200, body

        until_closed(idle, REQUEST_TIMEOUT + CLOSING_GRACE, health_and_an_act_answer_within_a_second)


#: New connections that send nothing, opened as fast as the client can: more than the old accepting (one every
#: 25 ms per busy worker) took in the seconds the test waits.
IDLE_FLOOD = 600


def trickling(server, head: bytes, first: bytes) -> socket.socket:
    """A connection that sent a request head and the first bytes of its body, and goes on slowly."""
    connection = socket.create_connection((server.host, server.port), timeout=30)
    connection.sendall(head + first)
    return connection


@pytest.mark.slow
def test_bodies_sent_a_byte_at_a_time_and_a_flood_of_idle_connections_leave_health_answering(database, tmp_path):
    """A worker's threads take only requests that have arrived whole: bodies trickled a byte at a time, larger
    than BUFFERED_BODY or chunked, without a token, on twice as many connections as the workers have threads, then
    IDLE_FLOOD connections that send nothing, leave /health answering within a second each time it is asked."""
    main(["migrate"])
    large = (b"POST /documents HTTP/1.1\r\nHost: x\r\nContent-Type: application/pdf\r\n"
             b"Content-Length: %d\r\n\r\n" % (BUFFERED_BODY + 1))
    chunked = (b"POST /cases HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
               b"Transfer-Encoding: chunked\r\n\r\n")
    with serving(tmp_path, "--workers", "2") as server:
        slow = [trickling(server, large, b"%PDF-") for _ in range(2 * THREADS)]
        slow += [trickling(server, chunked, b"400\r\n{") for _ in range(2 * THREADS)]
        flood = []

        def health_answers_while_the_bodies_trickle() -> None:
            for _ in range(5):
                for connection in slow:
                    connection.sendall(b" ")
                assert request(f"{server.url}/health", timeout=1.0)[0] == 200

        try:
            health_answers_while_the_bodies_trickle()
            flood = [socket.create_connection((server.host, server.port), timeout=30) for _ in range(IDLE_FLOOD)]
            health_answers_while_the_bodies_trickle()
        finally:
            for connection in slow + flood:
                connection.close()


@pytest.mark.slow
def test_a_body_in_any_framing_gunicorn_reads_is_read_on_the_loop_and_stalled_holds_no_thread(database, tmp_path):
    """A Content-Length of 19 digits with leading zeros, or a Transfer-Encoding list ending in chunked, went to a
    thread that read the body from the socket: four such stalled requests per worker held /health 10 s."""
    main(["migrate"])
    heads = [b"POST /cases HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
             b"Content-Length: 0000000000000000100\r\n\r\n{",
             b"POST /cases HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
             b"Transfer-Encoding: identity, chunked\r\n\r\n10\r\n{",
             b"POST /cases HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
             b"Transfer-Encoding: identity\r\nTransfer-Encoding: chunked\r\n\r\n10\r\n{"]
    with serving(tmp_path, "--workers", "2") as server:
        stalled = [trickling(server, head, b"") for head in heads for _ in range(2 * THREADS)]
        try:
            for _ in range(3):
                assert request(f"{server.url}/health", timeout=1.0)[0] == 200
        finally:
            for connection in stalled:
                connection.close()


@pytest.mark.slow
def test_a_body_too_large_or_badly_framed_is_refused_before_a_thread_reads_it_and_100_continue_is_answered(
        database, tmp_path):
    main(["migrate"])
    post = b"POST /cases HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
    with serving(tmp_path, "--workers", "1") as server:
        status, problem = raw_answer(server.host, server.port, post + b"Content-Length: %d\r\n\r\n" % (1 << 40))
        assert (status, problem["field"]) == (413, "body") and "TRAMITA_MAX_DOCUMENT_BYTES" in problem["detail"]
        chunked = post + b"Transfer-Encoding: chunked\r\n\r\n"
        for framing in (b"zz\r\n{}\r\n0\r\n\r\n", b"-2\r\n{}\r\n0\r\n\r\n", b"1\r\n{}\r\n0\r\n\r\n",
                        b"2\r\n{}\r\n0\r\nX A: b\r\n\r\n", b"2;" + b"e" * 5000 + b"\r\n{}\r\n0\r\n\r\n"):
            status, problem = raw_answer(server.host, server.port, chunked + framing)
            assert (status, problem["field"]) == (400, "body"), (framing[:20], problem)
        with socket.create_connection((server.host, server.port), timeout=30) as connection:
            connection.sendall(post + b"Expect: 100-continue\r\nContent-Length: 2\r\n\r\n")
            assert connection.recv(64).startswith(b"HTTP/1.1 100 Continue\r\n\r\n")
            connection.sendall(b"{}")
            answer = b""
            while b"\r\n\r\n" not in answer.removeprefix(b"HTTP/1.1 100 Continue\r\n\r\n"):
                answer += connection.recv(4096) or b"\r\n\r\n"
            final = answer.replace(b"HTTP/1.1 100 Continue\r\n\r\n", b"")
            assert final.startswith(b"HTTP/1.1 401 "), answer[:200]
            assert answer.count(b"100 Continue") == 0  # said once, before the body, and not again by the thread


@pytest.mark.slow
def test_bodies_past_a_worker_s_budget_are_answered_503_with_retry_after_and_announced_ones_hold_nothing(
        database, tmp_path):
    """The budget holds the bytes that have arrived: heads announcing the largest bodies and sending none leave a
    small request with a body served; two bodies whose bytes together pass the budget on one worker make the second
    answered 503 with Retry-After, at once, while a request without a body is still served."""
    main(["migrate"])
    head = (b"POST /documents HTTP/1.1\r\nHost: x\r\nContent-Type: application/pdf\r\n"
            b"Content-Length: %d\r\n\r\n" % BODY_BUDGET)
    part = b"%PDF-" + b"0" * (BODY_BUDGET * 2 // 3)
    with serving(tmp_path, "--workers", "1", env={"TRAMITA_MAX_DOCUMENT_BYTES": str(BODY_BUDGET)}) as server:
        announced = [trickling(server, head, b"") for _ in range(8)]
        filling = []
        try:
            status, _, _ = request(f"{server.url}/cases", "POST", {"kind": "creation"}, timeout=30)
            assert status == 401  # read whole and answered by the app, not 503
            filling = [trickling(server, head, part)]
            second = socket.create_connection((server.host, server.port), timeout=30)
            filling.append(second)
            try:
                second.sendall(head + part)
            except (BrokenPipeError, ConnectionResetError):
                pass  # answered before all of it was sent: the answer is read below
            answer = second.recv(4096)
            assert answer.startswith(b"HTTP/1.1 503 Service Unavailable\r\n") and b"\r\nRetry-After: " in answer
            assert request(f"{server.url}/health", timeout=30)[0] == 200
        finally:
            for connection in announced + filling:
                connection.close()


@pytest.mark.slow
def test_kept_alive_connections_opened_one_after_another_spread_over_the_workers(database, tmp_path):
    """Left to gunicorn, the worker that has just answered takes the next connection too, and a client pool's
    connections all end on one worker; a worker holding THREADS connections leaves the next to a less busy one."""
    main(["migrate"])
    count = 4 * THREADS
    with serving(tmp_path, "--workers", "2") as server:
        both_workers_serving(server)
        held = kept_alive(server, count)
    assert sum(held.values()) == count and len(held) == 2, held
    assert min(held.values()) >= THREADS, held


def kept_alive(server, count: int) -> dict[int, int]:
    """Open `count` connections, each used and kept alive before the next is opened; the connections each worker
    then holds (they are closed after)."""
    connections = [http.client.HTTPConnection(server.host, server.port, timeout=30) for _ in range(count)]
    try:
        for connection in connections:
            connection.request("GET", "/health")
            response = connection.getresponse()
            assert response.status == 200 and response.getheader("Connection", "").lower() != "close"
            response.read()
        return connections_by_worker(server)
    finally:
        for connection in connections:
            connection.close()


def both_workers_serving(server) -> None:
    """Until each of the two workers has taken a connection (the second may still be starting when the first
    answers), however long a loaded machine takes."""
    deadline = time.monotonic() + START_SECONDS
    while sum(1 for held in kept_alive(server, 2 * THREADS).values() if held) < 2:
        assert time.monotonic() < deadline, "the second worker took no connection"
        time.sleep(0.1)


@pytest.mark.slow
def test_gunicorn_s_own_refusals_are_problem_json(database, tmp_path):
    main(["migrate"])
    with serving(tmp_path, "--workers", "1") as server:
        answer = partial(raw_answer, server.host, server.port)
        status, problem = answer(b"GET /" + b"a" * 5000 + b" HTTP/1.1\r\nHost: x\r\n\r\n")
        assert (status, problem["status"], problem["title"]) == (414, 414, HTTPStatus(414).phrase)
        assert problem["type"].endswith("uri-too-long") and "4094" in problem["detail"]
        status, problem = answer(b"GET / HTTP/1.1\r\nHost: x\r\nX-Big: " + b"b" * 9000 + b"\r\n\r\n")
        assert (status, problem["title"]) == (431, "Request Header Fields Too Large")
        many = b"".join(b"X-%d: %s\r\n" % (n, b"c" * 1000) for n in range(80))
        status, problem = answer(b"GET / HTTP/1.1\r\nHost: x\r\n" + many + b"\r\n")
        assert (status, problem["title"]) == (431, "Request Header Fields Too Large")
        assert str(MAX_HEAD_BYTES) in problem["detail"]
        status, problem = answer(b"NOT AN HTTP REQUEST\r\n\r\n")
        assert (status, problem["title"]) == (400, "Bad Request")


def test_gunicorn_settings_come_from_tramita_then_the_config_file_then_gunicorn_cmd_args_then_the_options(
        tmp_path, monkeypatch):
    config = tmp_path / "gunicorn.conf.py"
    config.write_text('bind = "127.0.0.1:9001"\nworkers = 5\nthreads = 7\nkeepalive = 9\n')
    monkeypatch.delenv("GUNICORN_CMD_ARGS", raising=False)
    defaults = Gunicorn().cfg
    assert (defaults.worker_class_str, defaults.threads, defaults.keepalive, defaults.bind, defaults.workers) == (
        "tramita.serve.TramitaWorker", 4, 5, ["127.0.0.1:8000"], 2)
    from_file = Gunicorn(config_file=str(config)).cfg
    assert (from_file.bind, from_file.workers, from_file.threads, from_file.keepalive) == (
        ["127.0.0.1:9001"], 5, 7, 9)
    monkeypatch.setenv("GUNICORN_CMD_ARGS", f"-c {config} --threads 3")
    from_env = Gunicorn().cfg
    assert (from_env.bind, from_env.threads) == (["127.0.0.1:9001"], 3)
    overridden = Gunicorn({"bind": "127.0.0.1:9002", "workers": 1}, str(config)).cfg
    assert (overridden.bind, overridden.workers, overridden.threads) == (["127.0.0.1:9002"], 1, 3)
