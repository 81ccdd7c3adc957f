"""docs/nginx.conf, as committed, in front of a real `tramita serve`: it passes the API through, holds idle
connections itself, and answers its own refusals as problem+json.

Needs an nginx binary (Debian: `apt-get install nginx-light`; `.ci/run` installs it): skipped without one, failed
when CI is set.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from tramita.cli import main
from tests.servers import (
    REPO, free_port, idle_connections, in_ci, raw_answer, request, serving, stop, until_closed, wait_until_answers,
)
from tests.test_api_serve import IDLE_CONNECTIONS, created_token

CONFIG = REPO / "docs" / "nginx.conf"
UPSTREAM, LISTEN = "server 127.0.0.1:8000;", "listen 80;"
#: Seconds of nginx's client_header_timeout in docs/nginx.conf, and how long past it an idle connection may last.
HEADER_TIMEOUT, CLOSING_GRACE = 10.0, 10.0

pytestmark = pytest.mark.slow


def nginx_binary() -> str:
    found = shutil.which("nginx") or next((p for p in ("/usr/sbin/nginx", "/usr/local/sbin/nginx")
                                           if os.access(p, os.X_OK)), None)
    if found is None:
        missing = "no nginx binary (Debian: apt-get install nginx-light)"
        if in_ci():
            pytest.fail(f"nginx tests: {missing}, and CI is set, so this is an error, not a skip", pytrace=False)
        pytest.skip(f"nginx tests: {missing}")
    return found


def site(upstream_port: int, listen_port: int) -> str:
    """docs/nginx.conf with the test's ports: its upstream and listen lines, each exactly once, replaced."""
    text = CONFIG.read_text()
    assert text.count(UPSTREAM) == 1 and text.count(LISTEN) == 1, "docs/nginx.conf changed its upstream or listen"
    return text.replace(UPSTREAM, f"server 127.0.0.1:{upstream_port};").replace(
        LISTEN, f"listen 127.0.0.1:{listen_port};")


def main_config(folder: Path, site_file: Path) -> str:
    """What Debian's /etc/nginx/nginx.conf provides around conf.d/*.conf, kept inside the test's folder."""
    temp = {name: folder / name for name in ("body", "proxy", "fastcgi", "uwsgi", "scgi")}
    return "\n".join([
        "daemon off;", "worker_processes 1;", f"pid {folder / 'nginx.pid'};", f"error_log {folder / 'error.log'};",
        *(["user root;"] if os.geteuid() == 0 else []),
        "events { worker_connections 512; }",
        "http {", f"  access_log {folder / 'access.log'};",
        *(f"  {name}_temp_path {path};" if name != "body" else f"  client_body_temp_path {path};"
          for name, path in temp.items()),
        f"  include {site_file};", "}", ""])


@pytest.fixture
def proxied(tmp_path, monkeypatch, capsys) -> Iterator[tuple[str, int, object, str]]:
    """`tramita serve` on the demo, nginx in front with docs/nginx.conf: (nginx's URL and port, the server, a
    token)."""
    binary = nginx_binary()
    monkeypatch.setenv("TRAMITA_DATABASE_URL", f"sqlite:///{tmp_path / 'tramita.sqlite'}")
    main(["migrate"])
    main(["seed-demo"])
    capsys.readouterr()
    _, token = created_token(capsys, "--role", "auditor", "--name", "Tribunal de Contas")
    folder = tmp_path / "nginx"
    folder.mkdir()
    with serving(tmp_path, "--workers", "1") as server:
        port = free_port()
        site_file = folder / "tramita.conf"
        site_file.write_text(site(server.port, port))
        (folder / "nginx.conf").write_text(main_config(folder, site_file))
        checked = subprocess.run([binary, "-t", "-p", str(folder), "-c", str(folder / "nginx.conf")],
                                 capture_output=True, text=True)
        assert checked.returncode == 0, checked.stderr
        with open(folder / "stderr.log", "wb") as out:
            nginx = subprocess.Popen([binary, "-p", str(folder), "-c", str(folder / "nginx.conf")], stdout=out,
                                     stderr=subprocess.STDOUT)
        try:
            url = f"http://127.0.0.1:{port}"
            wait_until_answers(f"{url}/health", process=nginx, log=folder / "error.log")
            yield url, port, server, token
        finally:
            stop(nginx)


def test_nginx_passes_the_api_through_with_its_problems_and_its_headers(proxied):
    url, _, _, token = proxied
    status, headers, body = request(f"{url}/cases/LC35-1991-0001/verify", Authorization=f"Bearer {token}")
    assert status == 200 and json.loads(body)["ok"] is True
    status, headers, body = request(f"{url}/cases")
    assert status == 401 and headers["Content-Type"] == "application/problem+json"
    assert headers["WWW-Authenticate"] == 'Bearer realm="tramita"' and json.loads(body)["status"] == 401


def test_nginx_answers_its_own_refusals_as_problem_json(proxied):
    _, port, server, _ = proxied
    status, problem = raw_answer("127.0.0.1", port, b"GET /" + b"a" * 9000 + b" HTTP/1.1\r\nHost: x\r\n\r\n")
    assert (status, problem["status"], problem["title"]) == (414, 414, "Request-URI Too Long")
    status, problem = raw_answer("127.0.0.1", port, b"GET / HTTP/1.1\r\nHost: x\r\nX-Big: " + b"b" * 9000 + b"\r\n\r\n")
    assert (status, problem["title"]) == (431, "Request Header Fields Too Large")
    status, problem = raw_answer("127.0.0.1", port, b"POST /cases HTTP/1.1\r\nHost: x\r\nContent-Length: 2000000\r\n\r\n")
    assert (status, problem["title"]) == (413, "Request Entity Too Large")
    status, problem = raw_answer("127.0.0.1", port, b"NOT HTTP\r\n\r\n")
    assert (status, problem["type"]) == (400, "https://tramita.ac.gov.br/problems/bad-request")
    assert server.process.poll() is None


def test_fifty_idle_connections_to_nginx_leave_health_answering_until_nginx_closes_them(proxied):
    url, port, _, _ = proxied

    def health_answers_within_a_second() -> None:
        assert request(f"{url}/health", timeout=1.0)[0] == 200

    until_closed(idle_connections("127.0.0.1", port, IDLE_CONNECTIONS), HEADER_TIMEOUT + CLOSING_GRACE,
                 health_answers_within_a_second)


def test_nginx_says_in_problem_json_when_the_api_is_down(proxied):
    url, _, server, _ = proxied
    assert stop(server.process) == 0
    status, headers, body = request(f"{url}/health")
    assert (status, headers["Content-Type"], json.loads(body)["title"]) == (502, "application/problem+json",
                                                                            "Bad Gateway")


def test_nginx_passes_a_document_upload_larger_than_an_act_and_refuses_one_over_the_document_limit(proxied):
    _, port, server, token = proxied
    document = b"%PDF-1.4\n" + b"0" * (2 * 1024 * 1024)  # twice an act's limit, within a document's
    head = (f"POST /documents HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {token}\r\nContent-Type: application/pdf"
            f"\r\nContent-Length: {len(document)}\r\nConnection: close\r\n\r\n").encode()
    status, problem = raw_answer("127.0.0.1", port, head + document)
    assert status == 403 and problem["article"]  # tramita's answer (an auditor stores no document): passed through
    oversized = b"POST /documents HTTP/1.1\r\nHost: x\r\nContent-Type: application/pdf\r\nContent-Length: 11000000\r\n\r\n"
    status, problem = raw_answer("127.0.0.1", port, oversized)
    assert (status, problem["title"]) == (413, "Request Entity Too Large")
    assert server.process.poll() is None
