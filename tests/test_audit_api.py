"""The audit record over HTTP: every act's answer carries a signed receipt; signed checkpoints, the verifier key
and consistency proofs are public; inclusion proofs and exports check offline against a checkpoint; a receipt
whose event is later missing or different is proof of tampering (`tramita verify --receipt`)."""

from __future__ import annotations

import base64
import json
from datetime import date

import pytest

from tramita.cli import main
from audit import merkle
from audit.notes import Signer, entry_of, open_checkpoint, open_note
from audit.receipts import open_receipt
from tests.api_client import ApiHarness
from tests.conftest import BACKENDS
from domain.demo import GUIOMARD, PLACIDO
from tests.test_api_walk import open_1991_petition, petition_to_law
from tests.test_chain import StoredEvents

ORIGIN = "tramita.test/acre"


@pytest.fixture(params=BACKENDS)
def api(request, new_database_url):  # noqa: ANN001, ANN201
    harness = ApiHarness(new_database_url(request.param), signer=Signer.generate(ORIGIN))
    yield harness
    harness.close()


def sign(api: ApiHarness) -> str:
    """A checkpoint signed now, as the scheduler does; its note."""
    return api.flask.extensions["tramita.audit"].sign_checkpoint().checkpoint.note


def unb64(values: list[str]) -> list[bytes]:
    return [base64.b64decode(v) for v in values]


def test_every_act_answer_carries_a_receipt_signed_by_the_logs_key(api):
    verifier = api.signer.verifier
    opened = open_1991_petition(api)
    case = opened["case_id"]
    petition = open_receipt(opened["receipt"]["note"], verifier)
    assert (str(petition.aggregate_id), petition.version) == (case, 1)
    assert petition.hash == api.app.events_of(case)[0].hash
    answer = api.act(case, "finding-recorded", "ibge", date(1991, 12, 20), item="art-4-IV", value=80,
                     by_origin={PLACIDO: 50, GUIOMARD: 30}, document="Laudo art-4-IV 1991")
    receipt = open_receipt(answer["receipt"]["note"], verifier)
    event = api.app.events_of(case)[answer["version"] - 1]
    assert (str(receipt.aggregate_id), receipt.version, receipt.hash) == (case, answer["version"], event.hash)
    assert receipt.recorded_at == event.timestamp and receipt.notification_id > petition.notification_id


def test_a_replayed_retry_answers_with_the_same_receipt(api):
    case = petition_to_law(api)
    headers = api.headers("governor", **{"If-Match": api.etag(case), "Idempotency-Key": "list-1"})
    body = {"occurred_on": "1992-01-25", "names": ["Ana Souza", "Bruno Lima", "Carla Dias"]}
    first = api.client.post(f"/cases/{case}/acts/administrator-list-sent", json=body, headers=headers)
    again = api.client.post(f"/cases/{case}/acts/administrator-list-sent", json=body, headers=headers)
    assert again.headers["Idempotent-Replayed"] == "true"
    keep = ("aggregate_id", "version", "hash", "notification_id", "recorded_at")
    assert {k: again.get_json()["receipt"][k] for k in keep} == {k: first.get_json()["receipt"][k] for k in keep}


def test_checkpoints_and_the_verifier_key_are_public_and_verify(api):
    petition_to_law(api)
    assert api.client.get("/checkpoints/latest").status_code == 404  # none signed yet: said as a problem
    note = sign(api)
    latest = api.client.get("/checkpoints/latest")
    assert latest.status_code == 200 and latest.mimetype == "text/plain" and latest.get_data(as_text=True) == note
    checkpoint = open_checkpoint(note, api.signer.verifier)
    assert checkpoint.size == api.notifications()
    assert api.client.get(f"/checkpoints/{checkpoint.size}").get_data(as_text=True) == note
    assert api.client.get(f"/checkpoints/{checkpoint.size + 1}").status_code == 404
    assert api.client.get("/checkpoints/key").get_data(as_text=True).strip() == str(api.signer.verifier)


def test_a_consistency_proof_links_two_signed_checkpoints(api):
    case = petition_to_law(api)
    first = open_checkpoint(sign(api), api.signer.verifier)
    api.act(case, "administrator-list-sent", "governor", date(1992, 1, 25),
            names=["Ana Souza", "Bruno Lima", "Carla Dias"])
    second = open_checkpoint(sign(api), api.signer.verifier)
    assert second.size > first.size
    proof = api.client.get(f"/proofs/consistency?from={first.size}&to={second.size}").get_json()
    merkle.verify_consistency(first.size, second.size, first.root, second.root, unb64(proof["hashes"]))
    with pytest.raises(merkle.ProofError):
        merkle.verify_consistency(first.size, second.size, second.root, second.root, unb64(proof["hashes"]))
    too_far = api.client.get(f"/proofs/consistency?from=1&to={second.size + 5}")
    assert too_far.status_code == 422 and too_far.mimetype == "application/problem+json"


def test_an_inclusion_proof_places_a_case_event_under_the_signed_root(api):
    case = petition_to_law(api)
    checkpoint = open_checkpoint(sign(api), api.signer.verifier)
    assert api.client.get(f"/cases/{case}/events/3/proof").status_code == 401  # a case's event needs a token
    proof = api.get(f"/cases/{case}/events/3/proof").get_json()
    event = api.app.events_of(case)[2]
    leaf = merkle.leaf_hash(entry_of(event.originator_id, 3, event.hash))
    assert base64.b64decode(proof["leaf_hash"]) == leaf and proof["tree_size"] == checkpoint.size
    merkle.verify_inclusion(proof["leaf_index"], checkpoint.size, leaf, unb64(proof["hashes"]), checkpoint.root)


def test_an_export_proves_each_event_in_the_signed_log_and_ends_with_the_signed_case_head(api):
    case = petition_to_law(api)
    checkpoint = open_checkpoint(sign(api), api.signer.verifier)
    api.act(case, "administrator-list-sent", "governor", date(1992, 1, 25),
            names=["Ana Souza", "Bruno Lima", "Carla Dias"])  # recorded after the checkpoint: not yet covered
    *lines, closing = [json.loads(line) for line in api.get(f"/cases/{case}/export").get_data(as_text=True)
                       .splitlines()]
    closing_checkpoint = open_checkpoint(closing["checkpoint"], api.signer.verifier)
    assert closing_checkpoint == checkpoint
    for line in lines[:-1]:
        proof = line["proof"]
        entry = entry_of(api.app.resolve_case(case), line["originator_version"], line["hash"])
        merkle.verify_inclusion(proof["leaf_index"], proof["tree_size"], merkle.leaf_hash(entry),
                                unb64(proof["hashes"]), checkpoint.root)
    assert lines[-1]["proof"] is None and closing["not_yet_covered"] == [lines[-1]["originator_version"]]
    head = open_note(closing["case_head"], api.signer.verifier).split("\n")
    assert head[:4] == [ORIGIN, case, str(lines[-1]["originator_version"]), lines[-1]["hash"]]


def test_the_whole_store_verifies_over_http_for_an_auditor(api):
    petition_to_law(api)
    sign(api)
    assert api.client.get("/verify").status_code == 401
    verdict = api.get("/verify").get_json()
    assert verdict["ok"] is True and verdict["covered"] == verdict["events"] and verdict["not_yet_covered"] == 0
    assert api.get(f"/cases/{api.app.resolve_case('LC35-1991-0001')}/verify").get_json()["ok"] is True


def test_a_receipt_whose_event_was_later_rewritten_or_deleted_proves_the_tampering(api, tmp_path, monkeypatch,
                                                                                    capsys):
    case = petition_to_law(api)
    answer = api.act(case, "administrator-list-sent", "governor", date(1992, 1, 25),
                     names=["Ana Souza", "Bruno Lima", "Carla Dias"])
    kept = tmp_path / "receipt.json"
    kept.write_text(json.dumps(answer), encoding="utf-8")  # the body's whole answer, as the Governor kept it
    monkeypatch.setenv("TRAMITA_DATABASE_URL", api.url)
    monkeypatch.setenv("TRAMITA_VERIFIER_KEY", str(api.signer.verifier))
    assert main(["verify", "--receipt", str(kept)]) == 0
    assert "stored as the receipt says" in capsys.readouterr().out
    with StoredEvents(api.url) as stored:
        row = stored.execute("SELECT state FROM {table} WHERE originator_id = ? AND originator_version = ?",
                             stored.id_of(api.app.resolve_case(case)), answer["version"])
        state = bytes(row[0][0]).replace(b"Bruno Lima", b"Bruno Lins")
        stored.set_state(stored.id_of(api.app.resolve_case(case)), answer["version"], state)
    assert main(["verify", "--receipt", str(kept)]) == 1
    assert "TAMPERED" in capsys.readouterr().out
    with StoredEvents(api.url) as stored:
        stored.execute("DELETE FROM {table} WHERE originator_id = ? AND originator_version = ?",
                       stored.id_of(api.app.resolve_case(case)), answer["version"])
    assert main(["verify", "--receipt", str(kept)]) == 1
    assert "no longer holds it (deleted)" in capsys.readouterr().out
    intruder = Signer.generate(ORIGIN)
    forged = tmp_path / "forged.txt"
    forged.write_text(intruder.sign_note(open_note(answer["receipt"]["note"], api.signer.verifier)), encoding="utf-8")
    assert main(["verify", "--receipt", str(forged)]) == 1
    assert "does not verify with the key" in capsys.readouterr().out


def test_a_registry_figures_answer_carries_the_receipt_of_the_municipalitys_event(api):
    response = api.client.post(f"/municipalities/{PLACIDO}/figures", headers=api.headers("ibge"),
                               json={"occurred_on": "1991-12-19", "figure": "population", "value": 9000,
                                     "as_of": "1991-12-01", "source": "test: illustrative 1991 figure"})
    assert response.status_code == 201, response.get_json()
    answer = response.get_json()
    receipt = open_receipt(answer["receipt"]["note"], api.signer.verifier)
    [stored] = api.app.recorder.select_notifications(receipt.notification_id, 1)
    assert (stored.originator_id, stored.originator_version) == (receipt.aggregate_id, answer["version"])


def test_an_export_whose_proofs_the_damaged_stored_tree_cannot_give_is_refused_naming_the_damage(api):
    """A deleted node of the stored tree: the export is not served with proofs missing as if intact."""
    case = petition_to_law(api)
    sign(api)
    with api.store.transaction() as tx:
        tx.execute("DELETE FROM audit_nodes WHERE level = 0")
    english = api.get(f"/cases/{case}/export")
    portuguese = api.client.get(f"/cases/{case}/export",
                                headers=api.headers("auditor", **{"Accept-Language": "pt-BR"}))
    assert english.status_code == portuguese.status_code == 500
    assert english.mimetype == "application/problem+json"
    assert english.get_json()["type"].endswith("/audit-tree-damaged")
    assert "the stored tree has no node (0, " in english.get_json()["detail"]
    assert portuguese.get_json()["detail"].startswith("a árvore de auditoria guardada está danificada")
    assert api.get(f"/cases/{case}/verify").get_json()["ok"] is False  # the verdict names it


def test_an_altered_tree_state_makes_a_proof_a_damaged_tree_not_a_bad_request(api):
    """Its state altered by hand, the tree gives no proof: before, the proof's answer blamed the request's size."""
    case = petition_to_law(api)
    sign(api)
    with api.store.transaction() as tx:
        tx.execute("UPDATE audit_state SET position = -1")
    for path in (f"/cases/{case}/events/1/proof", "/proofs/consistency?from=1&to=5", f"/cases/{case}/verify"):
        answer = api.get(path)
        assert answer.status_code == 500 and answer.get_json()["type"].endswith("/audit-tree-damaged"), path


def test_a_stored_checkpoint_whose_note_is_no_longer_text_is_served_as_a_damaged_tree(api):
    if api.store.dialect != "sqlite":
        pytest.skip("a PostgreSQL text column takes no other type")
    sign(api)
    with api.store.transaction() as tx:
        tx.execute("UPDATE audit_checkpoints SET note = CAST(note AS BLOB)")
    [(size,)] = api.store.query("SELECT size FROM audit_checkpoints")
    for path in ("/checkpoints/latest", f"/checkpoints/{size}"):
        answer = api.client.get(path)
        assert answer.status_code == 500 and answer.get_json()["type"].endswith("/audit-tree-damaged"), path


@pytest.mark.parametrize("edit", ["truncated", "version removed"])
def test_a_case_whose_stored_events_were_edited_unreadable_is_answered_as_an_altered_store_not_an_unknown_failure(
        api, edit):
    """A row cut short, or a middle event deleted: reading the case (and any act on it) was a bare 500."""
    case = petition_to_law(api)
    case_id = api.app.resolve_case(case)
    api.app.pool.budget = 0  # nothing kept from the next read on: each read reads the rows
    assert api.get(f"/cases/{case}").status_code == 200
    with StoredEvents(api.url) as stored:
        if edit == "truncated":
            [(state,)] = stored.execute("SELECT state FROM {table} WHERE originator_id = ? AND originator_version = 2",
                                        stored.id_of(case_id))
            stored.set_state(stored.id_of(case_id), 2, bytes(state)[:20])
        else:
            stored.execute("DELETE FROM {table} WHERE originator_id = ? AND originator_version = 2",
                           stored.id_of(case_id))
    if edit == "version removed":  # a gap in the versions: the chain names the deleted event (test_altered_store)
        response = api.get(f"/cases/{case}")
        assert response.status_code == 409 and response.get_json()["type"].endswith("/stored-events-altered")
        assert "at its event 2: the events before it are not stored" in response.get_json()["detail"]
        assert api.get(f"/cases/{case}/verify").get_json()["ok"] is False
        return
    for response in (api.get(f"/cases/{case}"), api.client.get(f"/cases/{case}", headers=api.headers(
            "auditor", **{"Accept-Language": "pt-BR"}))):
        assert response.status_code == 500 and response.mimetype == "application/problem+json"
        assert response.get_json()["type"].endswith("/stored-events-unreadable")
    assert f"the stored events of {case_id} no longer rebuild it (its event " in api.get(f"/cases/{case}").get_json()[
        "detail"]
    assert response.get_json()["detail"].startswith(f"os eventos gravados de {case_id} não o reconstroem mais")
    assert api.get(f"/cases/{case}/verify").get_json()["ok"] is False  # the verdict names it
