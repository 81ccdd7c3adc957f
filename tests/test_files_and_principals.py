"""What tramita's processes write is their owner's only, and the CLI records who ran it from the operating system,
not from variables anyone can set."""

from __future__ import annotations

import os
import pwd
import stat
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tramita.web import create_app
from tramita.cli import main
from tests.servers import REPO, stop
from tests.stores import make_app

ACCOUNT = pwd.getpwuid(os.geteuid()).pw_name


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


@pytest.fixture
def umask_022() -> Iterator[None]:
    """The usual umask (files 0644), whatever an earlier test left, restored afterwards."""
    previous = os.umask(0o022)
    yield
    os.umask(previous)


def tramita(url: str, *args: str, **env: str) -> subprocess.Popen:
    """`tramita ARGS` in a process of its own started with umask 022 (files 0644 unless tramita says otherwise)."""
    return subprocess.Popen([sys.executable, "-m", "tramita", *args], cwd=REPO, text=True,
                            env={**os.environ, "PYTHONPATH": str(REPO), "TRAMITA_DATABASE_URL": url, **env},
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, preexec_fn=lambda: os.umask(0o022))


def run(url: str, *args: str, **env: str) -> str:
    process = tramita(url, *args, **env)
    output, _ = process.communicate(timeout=300)
    assert process.returncode == 0, output
    return output


@pytest.mark.slow
def test_the_database_its_wal_and_shm_and_the_scheduler_lock_are_created_owner_only(tmp_path):
    database = tmp_path / "var" / "tramita.sqlite"
    url = f"sqlite:///{database}"
    run(url, "migrate")
    projector = tramita(url, "project", "--poll", "0.2")  # holds the database open: -wal and -shm exist
    try:
        assert "projetor acompanhando" in projector.stdout.readline()
        run(url, "scheduler", "--once")
        files = [database, Path(f"{database}-wal"), Path(f"{database}-shm"), Path(f"{database}.scheduler.lock")]
        assert {f.name: mode(f) for f in files} == {f.name: 0o600 for f in files}
        assert mode(database.parent) == 0o700
    finally:
        assert stop(projector) == 0


def test_the_app_factory_creates_the_database_owner_only(tmp_path, umask_022):
    database = tmp_path / "tramita.sqlite"
    create_app({"TRAMITA_DATABASE_URL": f"sqlite:///{database}"})
    assert mode(database) == 0o600


def issuers(url: str) -> list[str]:
    """The principal recorded on every token event, in order."""
    app = make_app(url, seed=False)
    return [event.actor["principal"] for token in app.tokens() for event in app.events.get(token.id)]


@pytest.mark.slow
def test_a_token_created_by_user_governador_records_the_real_operating_system_account(tmp_path):
    url = f"sqlite:///{tmp_path / 'tramita.sqlite'}"
    run(url, "seed-demo")
    run(url, "token", "create", "--role", "auditor", "--name", "Tribunal de Contas", USER="governador",
        LOGNAME="governador")
    assert issuers(url) == [f"os:{ACCOUNT}"]


def test_an_issuer_named_on_create_and_revoke_is_recorded_beside_the_account(tmp_path, monkeypatch, capsys):
    url = f"sqlite:///{tmp_path / 'tramita.sqlite'}"
    monkeypatch.setenv("TRAMITA_DATABASE_URL", url)
    main(["seed-demo"])
    capsys.readouterr()
    assert main(["token", "create", "--role", "auditor", "--name", "TCE-AC", "--issuer", "Maria Souza"]) == 0
    token_id = capsys.readouterr().out.split()[1]
    assert main(["token", "revoke", token_id, "--issuer", "João Lima"]) == 0
    assert issuers(url) == [f"Maria Souza (os:{ACCOUNT})", f"João Lima (os:{ACCOUNT})"]


@pytest.mark.parametrize("issuer", ["", "  ", "Maria\x00Souza", "Maria\u202eazuoS"])
def test_an_issuer_that_is_blank_or_holds_control_characters_is_refused(tmp_path, monkeypatch, capsys, issuer):
    monkeypatch.setenv("TRAMITA_DATABASE_URL", f"sqlite:///{tmp_path / 'tramita.sqlite'}")
    main(["seed-demo"])
    capsys.readouterr()
    assert main(["token", "create", "--role", "auditor", "--name", "TCE-AC", "--issuer", issuer]) == 2
    assert capsys.readouterr().err.startswith("tramita: --issuer: ")
