"""The standalone verifier on a real export from the API: a case recorded over HTTP, a checkpoint signed, one more
act after it; the export is accepted with the log's key alone, and each alteration is rejected."""

from __future__ import annotations

import json
from datetime import date
from pathlib import Path

import pytest

from audit.notes import Signer
from tests import export_fixtures as fx
from tests.api_client import ApiHarness
from tests.test_api_walk import petition_to_law
from tests.test_offline_verifier import run


@pytest.fixture(scope="module")
def real_export(tmp_path_factory) -> tuple[list[dict], str]:  # noqa: ANN001
    folder = tmp_path_factory.mktemp("real-export")
    api = ApiHarness(f"sqlite:///{folder / 'api.sqlite'}", signer=Signer.generate("tramita.test/acre"))
    try:
        case = petition_to_law(api)
        api.flask.extensions["tramita.audit"].sign_checkpoint()
        api.act(case, "administrator-list-sent", "governor", date(1992, 1, 25),
                names=["Ana Souza", "Bruno Lima", "Carla Dias"])  # after the checkpoint: signed, not yet covered
        text = api.get(f"/cases/{case}/export").get_data(as_text=True)
        return [json.loads(line) for line in text.splitlines()], str(api.signer.verifier)
    finally:
        api.close()


def rejected(lines: list[dict], key: str, path: Path, *words: str) -> None:
    result = run(fx.write_export(path, lines), key)
    assert result.returncode == 1, result.stdout + result.stderr
    assert all(word in result.stdout for word in words), result.stdout


def test_a_real_export_is_accepted_with_the_logs_key_alone(real_export, tmp_path):
    lines, key = real_export
    assert lines[-1]["not_yet_covered"] == [lines[-2]["originator_version"]]
    result = run(fx.write_export(tmp_path / "case.jsonl", lines), key)
    assert result.returncode == 0, result.stdout + result.stderr


@pytest.mark.parametrize(("alter", "words"), [
    (lambda lines: fx.change_field(lines, 12, "article", "art-99"), ("hash",)),
    (lambda lines: fx.drop_event(lines, 5), ("prev_hash",)),
    (lambda lines: fx.drop_event(lines, len(lines) - 1), ("case head",)),
    (lambda lines: fx.change_proof_step(lines, 3), ("proof",)),
    (fx.change_checkpoint_signature, ("checkpoint",)),
    (lambda lines: fx.strip_signature(lines, len(lines) - 1), ("signature",)),
    (lambda lines: fx.append_forged_event(lines), ("signature",)),
], ids=["event changed", "middle event dropped", "last event dropped", "proof step changed",
        "checkpoint signature changed", "uncovered event unsigned", "forged event appended"])
def test_each_alteration_of_a_real_export_is_rejected(real_export, tmp_path, alter, words):
    lines, key = real_export
    rejected(alter(lines), key, tmp_path / "altered.jsonl", *words)


def test_a_real_export_is_rejected_under_another_key(real_export, tmp_path):
    lines, _ = real_export
    rejected(lines, str(Signer.generate("tramita.test/acre").verifier), tmp_path / "case.jsonl")
