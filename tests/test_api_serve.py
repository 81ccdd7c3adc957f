"""Tokens from the command line, and `tramita serve` itself (stock gunicorn, no proxy): it starts, answers, stops
cleanly, each worker builds its own application, and its settings come from where they should. The hostile
clients are nginx's to answer (tests/test_nginx.py)."""

from __future__ import annotations

import json
import time

import pytest

from tramita.cli import main
from tramita.serve import Gunicorn
from tests.servers import START_SECONDS, request, serving


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
    assert "revogado em " in capsys.readouterr().out


@pytest.mark.parametrize(("args", "fault"), [
    (["--role", "mayor", "--name", "x"], "municipality: um token de mayor atua por um Município"),
    (["--role", "tre", "--municipality", "1200302", "--name", "x"], "municipality: um token de tre não atua"),
    (["--role", "emperor", "--name", "x"], "role: 'emperor' não é órgão competente"),
    (["--role", "council", "--municipality", "9999999", "--name", "x"], "não há município 9999999"),
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
    assert "migrado: base de eventos pronta" in server.output()


#: A gunicorn configuration file whose server hooks note, in MARKS, who runs them and whether the app factory's
#: module is loaded there.
HOOKS = """import os, sys


def note(role):
    with open(MARKS, "a") as out:
        out.write(f"{role} {os.getpid()} {os.getppid()} {'tramita.web' in sys.modules}\\n")


def when_ready(server):
    note("master")


def post_worker_init(worker):
    note("worker")
"""


@pytest.mark.slow
def test_each_worker_builds_its_own_application_after_the_fork_with_hooks_from_a_config_file(database, tmp_path):
    """No preloading: the master has not imported the app factory's module when it is ready, and each of the two
    workers has loaded the application by the time gunicorn's post_worker_init hook runs in it."""
    main(["migrate"])
    marks = tmp_path / "marks.txt"
    config = tmp_path / "gunicorn.conf.py"
    config.write_text(HOOKS.replace("MARKS", repr(str(marks))))
    with serving(tmp_path, "--workers", "2", "-c", str(config)) as server:
        deadline = time.monotonic() + START_SECONDS
        while len(noted := marks.read_text().splitlines()) < 3:  # the second worker may still be starting
            assert time.monotonic() < deadline and server.process.poll() is None, (noted, server.output())
            time.sleep(0.1)
    (master,), workers = [line.split() for line in noted if line.startswith("master")], [
        line.split() for line in noted if line.startswith("worker")]
    assert master[3] == "False", noted  # the master never built the application
    assert len({pid for _, pid, _, _ in workers}) == 2, noted
    assert all(parent == master[1] and loaded == "True" for _, _, parent, loaded in workers), noted
    assert server.process.returncode == 0, server.output()


def test_gunicorn_settings_come_from_tramita_then_the_config_file_then_gunicorn_cmd_args_then_the_options(
        tmp_path, monkeypatch):
    config = tmp_path / "gunicorn.conf.py"
    config.write_text('bind = "127.0.0.1:9001"\nworkers = 5\nthreads = 7\nkeepalive = 9\n')
    monkeypatch.delenv("GUNICORN_CMD_ARGS", raising=False)
    defaults = Gunicorn().cfg
    assert (defaults.worker_class_str, defaults.threads, defaults.keepalive, defaults.bind, defaults.workers) == (
        "gthread", 4, 5, ["127.0.0.1:8000"], 2)
    assert (defaults.preload_app, defaults.limit_request_line, defaults.limit_request_field_size) == (
        False, 8190, 16384)
    from_file = Gunicorn(config_file=str(config)).cfg
    assert (from_file.bind, from_file.workers, from_file.threads, from_file.keepalive) == (
        ["127.0.0.1:9001"], 5, 7, 9)
    monkeypatch.setenv("GUNICORN_CMD_ARGS", f"-c {config} --threads 3")
    from_env = Gunicorn().cfg
    assert (from_env.bind, from_env.threads) == (["127.0.0.1:9001"], 3)
    overridden = Gunicorn({"bind": "127.0.0.1:9002", "workers": 1}, str(config)).cfg
    assert (overridden.bind, overridden.workers, overridden.threads) == (["127.0.0.1:9002"], 1, 3)
