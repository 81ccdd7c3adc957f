"""The documents acts cite: uploaded as they are (PDF, PNG, JPEG), attached to an act by SHA-256 in its hash chain,
served to whoever reads the case exactly as uploaded, never served once their stored bytes were changed, and
listed in the case's export so that an auditor proves each file offline."""

from __future__ import annotations

import hashlib
import io
import json
import subprocess
import sys
from datetime import date
from pathlib import Path

import pytest

from api.documents import read_upload
from api.errors import Problem
from audit.notes import Signer
from domain.demo import GUIOMARD, PLACIDO
from tests.api_client import ApiHarness
from tests.conftest import BACKENDS
from tests.test_api_walk import ART_9_DOCUMENTS, open_1991_petition, record_1991_figures

VERIFIER = Path(__file__).resolve().parent.parent / "docs" / "audit" / "verify_export.py"
#: A minimal PDF and PNG: their magic bytes, and a body that differs per test where it matters.
PDF = b"%PDF-1.4\n1 0 obj\n<< /Type /Catalog >>\nendobj\ntrailer\n<< /Root 1 0 R >>\n%%EOF\n"
PNG = b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x01\x00\x00\x00\x01\x08\x02\x00\x00\x00"
JPEG = b"\xff\xd8\xff\xe0\x00\x10JFIF\x00\x01\x01\x00\x00\x01\x00\x01\x00\x00\xff\xd9"
FINDING = {"occurred_on": "1991-12-20", "item": "art-4-IV", "value": 80, "by_origin": {PLACIDO: 50, GUIOMARD: 30},
           "document": "Laudo art-4-IV 1991"}


@pytest.fixture(params=BACKENDS)
def api(request, new_database_url):  # noqa: ANN001, ANN201
    harness = ApiHarness(new_database_url(request.param), config={"TRAMITA_MAX_DOCUMENT_BYTES": "4096"},
                         signer=Signer.generate("tramita.test/acre"))
    for role in ("ibge", "tre", "governor", "auditor"):
        harness.token(role)  # issued now: a token issued later would be one more event than the test records
    yield harness
    harness.close()


def upload(api: ApiHarness, content: bytes, kind: str = "application/pdf", role: str = "ibge"):  # noqa: ANN201
    return api.client.post("/documents", data=content, headers=api.headers(role, **{"Content-Type": kind}))


def sha(content: bytes) -> str:
    return hashlib.sha256(content).hexdigest()


def stored_documents(api: ApiHarness) -> list[str]:
    return [row[0] for row in api.store.query("SELECT sha256 FROM documents ORDER BY sha256")]


def finding_with(api: ApiHarness, case: str, attachments: list[dict], expect: int = 200):  # noqa: ANN201
    response = api.client.post(f"/cases/{case}/acts/finding-recorded", json={**FINDING, "attachments": attachments},
                               headers=api.headers("ibge", **{"If-Match": api.etag(case)}))
    assert response.status_code == expect, response.get_json()
    return response


def attached_finding(api: ApiHarness, content: bytes = PDF) -> tuple[str, dict]:
    """A case whose IBGE finding attaches its report: the case id and the act's answer."""
    assert upload(api, content).status_code == 201
    case = open_1991_petition(api)["case_id"]
    answer = finding_with(api, case, [{"sha256": sha(content), "name": "Laudo IBGE art-4-IV.pdf"}]).get_json()
    api.projector.catch_up()
    return case, answer


def test_an_act_records_the_sha256_of_each_document_it_cites_in_its_hash_chain(api):
    case, answer = attached_finding(api)
    assert [e["type"] for e in answer["events"]] == ["Case.FindingRecorded", "Case.DocumentsAttached"]
    finding, attached = answer["events"]
    assert attached["payload"] == {"act": "finding-recorded", "act_version": finding["sequence"], "documents": [
        {"sha256": sha(PDF), "name": "Laudo IBGE art-4-IV.pdf", "type": "application/pdf", "size": len(PDF)}]}
    assert attached["article"] == finding["article"] and attached["prev_hash"] == finding["hash"]
    assert answer["receipt"]["hash"] == attached["hash"]  # the receipt covers the attachment
    verdict = api.get(f"/cases/{case}/verify").get_json()
    assert verdict["ok"] and not verdict["findings"], verdict
    document = api.get(f"/cases/{case}").get_json()
    assert document["attachments"] == [{"sha256": sha(PDF), "name": "Laudo IBGE art-4-IV.pdf",
                                        "type": "application/pdf", "size": len(PDF), "act": "finding-recorded",
                                        "act_version": finding["sequence"], "on": "1991-12-20"}]
    assert document["last_act"] == "FindingRecorded"  # the attachment is no act of the lifecycle


def test_a_petition_attaches_its_art_9_documents_when_it_opens_the_case(api):
    assert upload(api, PNG, "image/png", role="governor").status_code == 201
    record_1991_figures(api)
    opened = api.open_case("governor", date(1991, 12, 19), kind="creation", municipalities=[PLACIDO, GUIOMARD],
                           areas=[{"municipality": PLACIDO, "area_km2": "420.5"},
                                  {"municipality": GUIOMARD, "area_km2": "180"}],
                           proposed_name="Vila Extrema", documents=ART_9_DOCUMENTS,
                           attachments=[{"sha256": sha(PNG), "name": "Mapa da área.png"}])
    assert [e["type"] for e in opened["events"]] == ["Case.PetitionFiled", "Case.DocumentsAttached"]
    assert opened["events"][1]["payload"]["act_version"] == 1


def test_a_download_is_the_upload_byte_for_byte_with_its_type_and_immutable_caching(api):
    attached_finding(api)
    for content, kind in ((PDF, "application/pdf"), (JPEG, "image/jpeg")):
        assert upload(api, content, kind).status_code in (200, 201)
        response = api.get(f"/documents/{sha(content)}", role="ibge")
        assert response.status_code == 200
        assert response.data == content and response.mimetype == kind
        assert response.headers["ETag"] == f'"{sha(content)}"'
        assert "immutable" in response.headers["Cache-Control"]
        assert response.headers["X-Content-Type-Options"] == "nosniff"
    again = api.client.get(f"/documents/{sha(PDF)}", headers=api.headers("auditor", **{
        "If-None-Match": f'"{sha(PDF)}"'}))
    assert again.status_code == 304 and not again.data


def test_the_same_bytes_uploaded_again_are_the_same_document(api):
    first, second = upload(api, PDF), upload(api, PDF, role="tre")
    assert (first.status_code, second.status_code) == (201, 200)
    assert first.get_json() == second.get_json() == {"sha256": sha(PDF), "size": len(PDF), "type": "application/pdf"}
    assert first.headers["Location"] == f"/documents/{sha(PDF)}"
    assert stored_documents(api) == [sha(PDF)]


def test_an_auditor_reads_a_cited_document_and_an_anonymous_reader_does_not(api):
    attached_finding(api)
    assert api.get(f"/documents/{sha(PDF)}", role="auditor").data == PDF
    anonymous = api.client.get(f"/documents/{sha(PDF)}")
    assert anonymous.status_code == 401 and anonymous.mimetype == "application/problem+json"
    assert anonymous.headers["WWW-Authenticate"].startswith("Bearer")


def test_a_document_no_act_cites_is_read_by_the_token_that_uploaded_it_alone(api):
    assert upload(api, PDF, role="tre").status_code == 201
    assert api.get(f"/documents/{sha(PDF)}", role="tre").data == PDF
    other = api.get(f"/documents/{sha(PDF)}", role="auditor")
    assert other.status_code == 404 and other.get_json()["field"] == "sha256"
    assert api.get(f"/documents/{'0' * 64}", role="tre").status_code == 404
    assert api.get("/documents/NOT-A-HASH", role="tre").get_json()["field"] == "sha256"


def test_an_auditor_stores_no_document(api):
    response = upload(api, PDF, role="auditor")
    assert response.status_code == 403 and response.mimetype == "application/problem+json"
    assert response.get_json()["article"]
    assert stored_documents(api) == []


def test_a_changed_stored_document_is_reported_and_never_served(api):
    attached_finding(api)
    with api.store.transaction() as tx:
        tx.execute("UPDATE documents SET content = ? WHERE sha256 = ?", (PDF.replace(b"Catalog", b"Katalog"), sha(PDF)))
    before = api.notifications()
    response = api.get(f"/documents/{sha(PDF)}")
    assert response.status_code == 500 and response.mimetype == "application/problem+json"
    problem = response.get_json()
    assert problem["type"].endswith("/document-altered") and "document altered" in problem["detail"]
    assert b"Katalog" not in response.data
    assert api.notifications() == before + 1  # the system alert
    api.projector.catch_up()
    alerts = [a for a in api.get("/alerts").get_json()["items"] if a["kind"] == "document-altered"]
    assert len(alerts) == 1 and sha(PDF) in alerts[0]["subject"]
    assert api.get(f"/documents/{sha(PDF)}").status_code == 500  # still reported, alerted once
    api.projector.catch_up()
    assert len([a for a in api.get("/alerts").get_json()["items"] if a["kind"] == "document-altered"]) == 1
    assert upload(api, PDF).status_code == 200  # the original bytes, uploaded again, are written back
    assert api.get(f"/documents/{sha(PDF)}").data == PDF


def test_a_cited_document_deleted_from_the_store_is_reported_as_altered(api):
    attached_finding(api)
    with api.store.transaction() as tx:
        tx.execute("DELETE FROM documents WHERE sha256 = ?", (sha(PDF),))
    response = api.get(f"/documents/{sha(PDF)}")
    assert response.status_code == 500 and response.get_json()["type"].endswith("/document-altered")


def test_an_oversized_upload_is_refused_413_and_stores_nothing(api):
    before = api.notifications()
    response = upload(api, PDF + b"\0" * 4096)
    assert response.status_code == 413 and response.mimetype == "application/problem+json"
    assert response.get_json()["limit"] == 4096
    assert stored_documents(api) == [] and api.notifications() == before
    assert upload(api, PDF + b"\0" * (4096 - len(PDF))).status_code == 201  # exactly the limit is stored


@pytest.mark.parametrize(("content", "kind"), [
    (PDF, "text/plain"), (PDF, "application/json"), (PNG, "application/pdf"), (b"<html>", "image/png"),
    (b"%PDF-1.4", "image/jpeg"),
], ids=["text", "json", "png-bytes-as-pdf", "html-as-png", "pdf-bytes-as-jpeg"])
def test_an_upload_of_another_type_is_refused_415_and_stores_nothing(api, content, kind):
    before = api.notifications()
    response = upload(api, content, kind)
    assert response.status_code == 415 and response.mimetype == "application/problem+json"
    assert response.get_json()["field"] == "Content-Type"
    assert stored_documents(api) == [] and api.notifications() == before


def test_an_empty_upload_is_refused_and_stores_nothing(api):
    response = upload(api, b"")
    assert response.status_code == 400 and response.get_json()["field"] == "body"
    assert stored_documents(api) == []


def test_an_act_citing_a_document_never_stored_is_refused_422_naming_the_field_and_records_nothing(api):
    assert upload(api, PDF).status_code == 201
    case = open_1991_petition(api)["case_id"]
    version, before = api.etag(case), api.notifications()
    response = finding_with(api, case, [{"sha256": sha(PDF), "name": "Laudo.pdf"},
                                        {"sha256": sha(b"never uploaded"), "name": "Ofício.pdf"}], expect=422)
    assert response.get_json()["field"] == "attachments.1.sha256"
    twice = finding_with(api, case, [{"sha256": sha(PDF), "name": "a.pdf"}, {"sha256": sha(PDF), "name": "b.pdf"}],
                         expect=422)
    assert twice.get_json()["field"] == "attachments.1.sha256"
    malformed = finding_with(api, case, [{"sha256": sha(PDF).upper(), "name": "Laudo.pdf"}], expect=422)
    assert malformed.get_json()["field"] == "attachments.0.sha256"
    assert api.etag(case) == version and api.notifications() == before


def test_a_refused_act_records_no_attachment(api):
    assert upload(api, PDF).status_code == 201
    case = open_1991_petition(api)["case_id"]
    before = api.notifications()
    response = api.client.post(f"/cases/{case}/acts/finding-recorded", json={
        **FINDING, "occurred_on": "1991-12-18", "attachments": [{"sha256": sha(PDF), "name": "Laudo.pdf"}]},
        headers=api.headers("ibge", **{"If-Match": api.etag(case)}))
    assert response.status_code == 422, response.get_json()  # before the petition: refused
    assert api.notifications() == before
    assert api.get(f"/cases/{case}").get_json()["attachments"] == []


def test_an_upload_that_takes_too_long_is_cut_off_with_408():
    ticks = iter(range(0, 1000, 7))

    class Trickle(io.RawIOBase):
        def read(self, size: int = -1) -> bytes:
            return b"x"

    with pytest.raises(Problem) as cut:
        read_upload(Trickle(), 4096, seconds=60, clock=lambda: float(next(ticks)))
    assert cut.value.code == 408
    assert read_upload(io.BytesIO(PDF), 4096, seconds=60, clock=lambda: 0.0) == PDF
    with pytest.raises(Problem) as large:
        read_upload(io.BytesIO(b"x" * 5000), 4096, clock=lambda: 0.0)
    assert large.value.code == 413


def test_the_export_lists_each_document_and_the_offline_check_proves_the_files(api, tmp_path):
    case, _ = attached_finding(api)
    api.flask.extensions["tramita.audit"].sign_checkpoint()
    export = tmp_path / "case.jsonl"
    export.write_bytes(api.get(f"/cases/{case}/export").data)
    lines = [json.loads(line) for line in export.read_text(encoding="utf-8").splitlines()]
    listed = [d for line in lines if line.get("type") == "Case.DocumentsAttached" for d in line["documents"]]
    assert listed == [{"sha256": sha(PDF), "name": "Laudo IBGE art-4-IV.pdf", "type": "application/pdf",
                       "size": len(PDF)}]
    folder = tmp_path / "documents"
    folder.mkdir()
    key = str(api.signer.verifier)

    def check(*extra: str) -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, str(VERIFIER), str(export), "--key", key, *extra],
                              capture_output=True, text=True, timeout=120)

    without = check()
    assert without.returncode == 0 and "--documents" in without.stdout, without.stdout
    (folder / "laudo.pdf").write_bytes(api.get(f"/documents/{sha(PDF)}").data)
    proved = check("--documents", str(folder))
    assert proved.returncode == 0 and "documents: each of the 1 attached" in proved.stdout, proved.stdout
    (folder / "laudo.pdf").write_bytes(PDF.replace(b"Catalog", b"Katalog"))
    changed = check("--documents", str(folder))
    assert changed.returncode == 1 and sha(PDF) in changed.stdout, changed.stdout


@pytest.fixture
def sqlite_api(new_database_url):  # noqa: ANN001, ANN201
    """The API on a SQLite file: its columns take a value of any type, which an administrator may write."""
    harness = ApiHarness(new_database_url("sqlite"), signer=Signer.generate("tramita.test/acre"))
    for role in ("ibge", "tre", "governor", "auditor"):
        harness.token(role)
    yield harness
    harness.close()


@pytest.mark.parametrize("edit", ["CAST(content AS TEXT)", "replace(content, 'Catalog', 'Katalog')"])
def test_a_document_rewritten_as_text_is_reported_altered_and_an_upload_of_the_original_repairs_it(sqlite_api, edit):
    api = sqlite_api
    attached_finding(api)
    with api.store.transaction() as tx:
        tx.execute(f"UPDATE documents SET content = {edit} WHERE sha256 = ?", (sha(PDF),))
    assert api.store.query("SELECT typeof(content) FROM documents WHERE sha256 = ?", (sha(PDF),)) == [("text",)]
    before = api.notifications()
    response = api.get(f"/documents/{sha(PDF)}")
    assert response.status_code == 500 and response.mimetype == "application/problem+json"
    assert response.get_json()["type"].endswith("/document-altered") and b"%PDF" not in response.data
    assert api.notifications() == before + 1  # the system alert, as for bytes that no longer give the digest
    api.projector.catch_up()
    alerts = [a for a in api.get("/alerts").get_json()["items"] if a["kind"] == "document-altered"]
    assert len(alerts) == 1 and sha(PDF) in alerts[0]["subject"] and "not bytes" in alerts[0]["message"]
    assert upload(api, PDF).status_code == 200  # the original bytes, uploaded again, replace the altered value
    assert api.store.query("SELECT typeof(content) FROM documents WHERE sha256 = ?", (sha(PDF),)) == [("blob",)]
    repaired = api.get(f"/documents/{sha(PDF)}")
    assert repaired.status_code == 200 and repaired.data == PDF


def test_a_document_whose_recorded_size_is_not_a_number_is_reported_altered(sqlite_api):
    api = sqlite_api
    attached_finding(api)
    with api.store.transaction() as tx:
        tx.execute("UPDATE documents SET size = 'muitos' WHERE sha256 = ?", (sha(PDF),))
    response = api.get(f"/documents/{sha(PDF)}")
    assert response.status_code == 500 and response.get_json()["type"].endswith("/document-altered")
    assert upload(api, PDF).status_code == 200
    assert api.get(f"/documents/{sha(PDF)}").data == PDF
