"""Tokens from the command line, and the API served by gunicorn as `tramita serve` runs it."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request

import pytest

from api.cli import main


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


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_for(url: str, timeout: float = 30) -> None:
    deadline = time.monotonic() + timeout
    while True:
        try:
            urllib.request.urlopen(url, timeout=2).close()
            return
        except (urllib.error.URLError, ConnectionError):
            if time.monotonic() > deadline:
                raise
            time.sleep(0.1)


@pytest.mark.slow
def test_serve_migrates_then_answers_over_gunicorn_and_stops_cleanly_on_sigterm(database, capsys):
    main(["migrate"])
    main(["seed-demo"])
    capsys.readouterr()
    _, token = created_token(capsys, "--role", "auditor", "--name", "Tribunal de Contas")
    base = f"http://127.0.0.1:{free_port()}"
    server = subprocess.Popen([sys.executable, "-m", "api.cli", "serve", "--bind", base[7:], "--workers", "2"],
                              env={**os.environ}, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        wait_for(f"{base}/health")
        request = urllib.request.Request(f"{base}/cases/LC35-1991-0001/verify",
                                         headers={"Authorization": f"Bearer {token}"})
        with urllib.request.urlopen(request, timeout=10) as response:
            assert json.load(response)["ok"] is True
        with pytest.raises(urllib.error.HTTPError) as unauthorised:
            urllib.request.urlopen(f"{base}/cases", timeout=10)
        assert unauthorised.value.code == 401 and unauthorised.value.headers["Content-Type"] == \
            "application/problem+json"
    finally:
        server.send_signal(signal.SIGTERM)
        output, _ = server.communicate(timeout=30)
    assert server.returncode == 0, output
    assert "migrated: event store ready" in output
