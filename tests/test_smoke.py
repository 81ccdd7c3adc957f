"""The smoke suite: the installed `tramita` command from migrate to verify, on a fresh SQLite file.

It runs in every environment the project is installed in: `make test`, and CI's second environment with the lowest
versions pyproject.toml allows (.ci/run, `pytest -m smoke`). Each step is a subprocess of the `tramita` console
script beside the interpreter running the test, so the entry point, the package data and every dependency's lowest
version are exercised as a deployment would: the signing key, migrate, the demo, tokens, gunicorn serving the API
(a petition and an act recorded over HTTP, the OpenAPI document, Swagger UI, the home page, the case and its
printable file read back), then the whole log verified.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.servers import free_port, request, stop, wait_until_answers

pytestmark = pytest.mark.smoke

#: Seconds one CLI command has (the demo's seeding on a loaded 2-core machine takes a few).
COMMAND_SECONDS = 600
#: Seconds one HTTP request has (the first printable case file loads WeasyPrint's fonts).
REQUEST_SECONDS = 120

# The README's clerk tour: a deputy's creation petition with the Art. 4 documents, then the IBGE's Art. 4-I finding.
PETITION = {
    "kind": "creation", "occurred_on": "2026-11-30", "municipalities": ["1200336"], "proposed_name": "Japiim",
    "areas": [{"municipality": "1200336", "area_km2": "310", "description": "Vila Japiim, Mâncio Lima"}],
    "documents": {f"art-4-{item}": f"Ofício {n}/2026"
                  for n, item in enumerate(("I", "II", "III", "IV", "V", "VI"), start=1)},
}
FINDING = {"occurred_on": "2026-11-30", "item": "art-4-I", "value": 2100, "document": "Ofício IBGE 9/2026"}


def installed_tramita() -> Path:
    """The console script of the environment whose interpreter runs this test."""
    script = Path(sys.executable).parent / "tramita"
    assert script.is_file(), f"no installed `tramita` beside {sys.executable}: install the project (pip install -e .)"
    return script


@pytest.fixture
def deployment(tmp_path) -> dict[str, str]:
    """A fresh deployment's environment: its own SQLite file, signing key and session key, no TRAMITA_ setting of
    the shell running the tests."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("TRAMITA")}
    env.update(TRAMITA_DATABASE_URL=f"sqlite:///{tmp_path / 'tramita.sqlite'}",
               TRAMITA_SIGNING_KEY=str(tmp_path / "signing.key"),
               TRAMITA_SESSION_KEY=str(tmp_path / "session.key"))
    return env


def tramita(env: dict[str, str], cwd: Path, *args: str) -> str:
    """Run `tramita ARGS`; it must exit 0. Its standard output."""
    done = subprocess.run([str(installed_tramita()), *args], cwd=cwd, env=env, capture_output=True, text=True,
                          timeout=COMMAND_SECONDS)
    assert done.returncode == 0, f"tramita {' '.join(args)} exited {done.returncode}:\n{done.stdout}\n{done.stderr}"
    return done.stdout


def test_the_installed_command_migrates_seeds_serves_records_an_act_and_verifies(deployment, tmp_path):
    tramita(deployment, tmp_path, "keys", "init")
    assert "projeções criadas" in tramita(deployment, tmp_path, "migrate")
    assert "recusado como esperado: art-38" in tramita(deployment, tmp_path, "seed-demo")
    deputy = tramita(deployment, tmp_path, "token", "create", "--role", "deputy", "--name", "smoke deputy")
    ibge = tramita(deployment, tmp_path, "token", "create", "--role", "ibge", "--name", "smoke IBGE")
    deputy, ibge = deputy.splitlines()[-1].strip(), ibge.splitlines()[-1].strip()

    port = free_port()
    url = f"http://127.0.0.1:{port}"
    log = tmp_path / "serve.log"
    with open(log, "wb") as out:
        server = subprocess.Popen([str(installed_tramita()), "serve", "--bind", f"127.0.0.1:{port}", "--workers", "1"],
                                  cwd=tmp_path, env=deployment, stdout=out, stderr=subprocess.STDOUT)
    try:
        wait_until_answers(f"{url}/health", process=server, log=log)

        def answer(path: str, method: str = "GET", body: dict | None = None, **headers: str):
            status, head, content = request(url + path, method, body, timeout=REQUEST_SECONDS, **headers)
            return status, {k.lower(): v for k, v in head.items()}, content

        status, head, content = answer("/cases", "POST", PETITION, Authorization=f"Bearer {deputy}")
        assert status == 201, content
        case, version = head["location"], head["etag"]
        status, head, content = answer(f"{case}/acts/finding-recorded", "POST", FINDING, Authorization=f"Bearer {ibge}",
                                       **{"If-Match": version})
        assert status == 200, content
        status, _, content = answer(case, Authorization=f"Bearer {ibge}")
        assert status == 200 and json.loads(content)["version"] == 2, content

        status, head, content = answer("/")
        assert status == 200 and head["content-type"].startswith("text/html") and b"tramita" in content
        status, _, content = answer("/openapi.json")
        assert status == 200 and "/cases" in json.loads(content)["paths"]
        status, _, content = answer("/docs")
        assert status == 200 and b"swagger" in content.lower()
        status, head, content = answer("/cases/LC35-1991-0001/dossier.pdf", Authorization=f"Bearer {ibge}")
        assert status == 200 and content.startswith(b"%PDF"), content[:300]
    finally:
        code = stop(server)
    assert code == 0, f"tramita serve did not stop cleanly ({code}):\n{log.read_text(errors='replace')[-4000:]}"

    verdict = tramita(deployment, tmp_path, "verify")
    lines = verdict.splitlines()  # the read models' check (not projected here: none differs), then the verdict
    assert lines[-1].startswith("VERDICT: intact") and any("nenhuma diferença" in line for line in lines), verdict
