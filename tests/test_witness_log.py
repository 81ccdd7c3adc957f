"""The log with two cosigning witnesses, each its own process (`tramita witness serve`): every checkpoint the log
signs gets both cosignatures and `verify --quorum 2` accepts it; a database rolled back to an earlier copy and
written on again is refused by both (409, the evidence kept), raises the tamper alarm, fails `verify --quorum 1`,
and is still refused by a restarted witness."""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from audit.cosign import Cosigner, CosignVerifier, cosignatures
from audit.keys import load_signing_key
from audit.witness_cosign import cosigning_witnesses_from
from audit.witness_service import WitnessStore
from domain.acts import Actor
from domain.demo import creation_1992
from tests.stores import make_app
from tests.test_witness_crash import WitnessProcess, tramita
from tests.test_offline_verifier import VERIFIER
from tramita.bootstrap import build_audit
from tramita.cli import main

ADMIN = Actor("admin", "token-administrator")
ORIGIN = "tramita.test/acre"


class Witnessed:
    """Two witnesses running, and the log's environment naming them."""

    def __init__(self, tmp_path: Path, monkeypatch) -> None:  # noqa: ANN001
        self.tmp_path, self.url = tmp_path, f"sqlite:///{tmp_path / 'tramita.sqlite'}"
        key = tmp_path / "keys" / "signing.key"
        for variable in ("TRAMITA_VERIFIER_KEY", "TRAMITA_WITNESS_DIR", "TRAMITA_WITNESS_URL"):
            monkeypatch.delenv(variable, raising=False)
        monkeypatch.setenv("TRAMITA_DATABASE_URL", self.url)
        monkeypatch.setenv("TRAMITA_SIGNING_KEY", str(key))
        monkeypatch.setenv("TRAMITA_LOG_ORIGIN", ORIGIN)
        assert main(["keys", "init"]) == 0
        self.signer = load_signing_key(key)
        self.witnesses, self.keys = [], []
        for name in ("tce.ac.gov.br/testemunha", "mpac.mp.br/testemunha"):
            folder = tmp_path / name.split(".")[0]
            env = {"TRAMITA_WITNESS_KEY": str(folder / "witness.key"),
                   "TRAMITA_WITNESS_DATABASE_URL": f"sqlite:///{folder / 'witness.sqlite'}"}
            assert tramita("witness", "keys", "init", "--name", name, env=env).returncode == 0
            self.keys.append(tramita("witness", "keys", "show", env=env).stdout.strip())
            self.witnesses.append(WitnessProcess(folder, env, str(self.signer.verifier)))
        for process in self.witnesses:
            process.start()
        monkeypatch.setenv("TRAMITA_WITNESSES", ",".join(f"{k}@{w.url}" for k, w in zip(self.keys, self.witnesses)))

    def app(self):  # noqa: ANN201
        return make_app(self.url, signer=self.signer)

    def refused(self, index: int) -> list:
        return WitnessStore(self.tmp_path / ["tce", "mpac"][index] / "witness.sqlite").refused()

    def stop(self) -> None:
        for process in self.witnesses:
            if process.process is not None and process.process.poll() is None:
                process.kill()


@pytest.fixture
def witnessed(tmp_path, monkeypatch, capsys):
    made = Witnessed(tmp_path, monkeypatch)
    made.number = creation_1992(made.app(), lambda line: None)
    assert main(["migrate"]) == 0
    capsys.readouterr()
    yield made
    made.stop()


def sign(capsys) -> tuple[int, str, str]:  # noqa: ANN001
    code = main(["checkpoint"])
    out = capsys.readouterr()
    return code, out.out, out.err


def test_the_witnesses_are_read_from_tramita_witnesses(witnessed):
    import os

    found = cosigning_witnesses_from(os.environ)
    assert [str(w.verifier) for w in found] == witnessed.keys and [w.url for w in found] == \
        [w.url for w in witnessed.witnesses]
    with pytest.raises(ValueError, match="TRAMITA_WITNESSES"):
        cosigning_witnesses_from({"TRAMITA_WITNESSES": witnessed.keys[0]})  # no @URL


def test_every_checkpoint_gets_both_cosignatures_and_verify_accepts_a_quorum_of_two(witnessed, capsys):
    code, note, err = sign(capsys)
    assert code == 0, err
    verifiers = [CosignVerifier.parse(key) for key in witnessed.keys]
    assert set(cosignatures(note, verifiers)) == set(witnessed.keys)
    witnessed.app().issue_token(ADMIN, name="clerk", role="tre")
    code, grown, err = sign(capsys)
    assert code == 0 and grown != note and set(cosignatures(grown, verifiers)) == set(witnessed.keys), err
    keys = [arg for key in witnessed.keys for arg in ("--witness-key", key)]
    assert main(["verify", "--no-read-models", *keys, "--quorum", "2"]) == 0
    assert "2 cossinaturas válidas (quórum 2)" in capsys.readouterr().out


def test_a_rolled_back_database_is_refused_by_both_witnesses_and_raises_the_tamper_alarm(witnessed, capsys):
    assert sign(capsys)[0] == 0
    database = witnessed.tmp_path / "tramita.sqlite"
    backup = witnessed.tmp_path / "copy.sqlite"
    with sqlite3.connect(database) as live, sqlite3.connect(backup) as copy:
        live.backup(copy)
    app = witnessed.app()
    for n in range(3):
        app.issue_token(ADMIN, name=f"clerk {n}", role="tre")
    assert sign(capsys)[0] == 0  # both cosign the larger tree
    with sqlite3.connect(backup) as copy, sqlite3.connect(database) as live:
        copy.backup(live)  # the database rolled back to the earlier copy...
    witnessed.app().issue_token(ADMIN, name="another clerk", role="tre")  # ...and written on again
    code, _, err = sign(capsys)
    assert code == 1 and "as testemunhas recusaram o ponto de verificação (checkpoint) que o registro assinou" in err
    assert "tce.ac.gov.br/testemunha recusou" in err and "mpac.mp.br/testemunha recusou" in err
    for index in (0, 1):
        [refusal] = witnessed.refused(index)
        assert refusal.status == 409 and ORIGIN in refusal.request and "voltou atrás" in refusal.reason
    alerts = [a for a in (witnessed.app().repository.get(n.originator_id) for n in witnessed.app().recorder
                          .select_notifications(1, 10_000, topics=["domain.alerts:Alert.SystemRaised"]))]
    refused = "the cosigning witnesses refused the checkpoint the log signed"
    assert any(a.kind == "tamper-alarm" and a.message.startswith(refused) and "recusou o checkpoint" in a.message
               for a in alerts)
    assert main(["verify", "--no-read-models", "--witness-key", witnessed.keys[0], "--quorum", "1"]) == 1
    assert "não tem o quórum de testemunhas" in capsys.readouterr().out
    witnessed.witnesses[0].kill()
    witnessed.witnesses[0].start()  # restarted on its own file
    code, _, err = sign(capsys)
    assert code == 1 and "tce.ac.gov.br/testemunha recusou" in err
    assert [r.status for r in witnessed.refused(0)] == [409, 409]
    shown = tramita("witness", "refused", env=witnessed.witnesses[0].env)
    [first, _] = [json.loads(line) for line in shown.stdout.splitlines()]
    assert first["status"] == 409 and first["request"] == witnessed.refused(0)[0].request
    assert f"— {ORIGIN} " in first["request"]  # the log's own signature: the evidence of its rollback


def export_of(witnessed: Witnessed, path: Path) -> Path:
    from infrastructure.store import open_store

    app = witnessed.app()
    lines = build_audit(app, open_store(witnessed.url)).export_lines(witnessed.number)
    path.write_text("".join(json.dumps(line, ensure_ascii=False) + "\n" for line in lines), encoding="utf-8")
    return path


def offline(export: Path, key: str, *witness_keys: str, quorum: int) -> subprocess.CompletedProcess:
    keys = [arg for witness in witness_keys for arg in ("--witness-key", witness)]
    return subprocess.run([sys.executable, str(VERIFIER), str(export), "--key", key, *keys, "--quorum", str(quorum)],
                          capture_output=True, text=True, check=False)


def test_an_export_verifies_offline_with_a_quorum_of_two_and_fails_with_a_forged_or_missing_cosignature(
        witnessed, capsys):
    assert sign(capsys)[0] == 0
    export = export_of(witnessed, witnessed.tmp_path / "case.jsonl")
    log_key = str(witnessed.signer.verifier)
    verified = offline(export, log_key, *witnessed.keys, quorum=2)
    assert verified.returncode == 0 and "quorum 2" in verified.stdout, verified.stdout
    *events, last = export.read_text(encoding="utf-8").splitlines()
    closing = json.loads(last)
    line = next(x for x in closing["checkpoint"].splitlines() if x.startswith("— mpac.mp.br/testemunha "))
    closing["checkpoint"] = closing["checkpoint"].replace(line, line[:-6] + ("BBBB==" if line.endswith("AAAA==")
                                                                             else "AAAA=="))
    forged = export.with_name("forged.jsonl")
    forged.write_text("\n".join([*events, json.dumps(closing, ensure_ascii=False)]) + "\n", encoding="utf-8")
    refused = offline(forged, log_key, *witnessed.keys, quorum=2)
    assert refused.returncode == 1 and "1 valid witness cosignatures of the 2 required" in refused.stdout
    stranger = str(Cosigner.generate("tce.ac.gov.br/testemunha").verifier)  # same name, another key
    missing = offline(export, log_key, witnessed.keys[0], stranger, quorum=2)
    assert missing.returncode == 1 and "of the 2 required" in missing.stdout
    assert offline(export, log_key, witnessed.keys[0], stranger, quorum=1).returncode == 0
