"""A printed case file's verification code: every sheet of a dossier prints it with the public page's address (and
a QR code of it), `/verificar/<código>` answers without a session with the SHA-256 of the file as delivered, the
case, the checkpoint it was issued against and the case's verdict now; a code never issued is a 404 page in
Portuguese; the issuance is an event of the log, which the full verification covers."""

from __future__ import annotations

import hashlib
import re

from audit.notes import Signer
from domain.dossiers import DossierIssue, normal_code
from tests.api_client import ApiHarness
from tests.test_api_walk import open_1991_petition
from tests.test_chain import StoredEvents
from tests.test_dossier import ORIGIN, demo, dossier_of, pdf_text  # noqa: F401 - the module's demo fixture

CODE = re.compile(r"código de verificação ([0-9A-Z]{4}-[0-9A-Z]{4}-[0-9A-Z]{4}-[0-9A-Z]{4})")


def page_text(response) -> str:  # noqa: ANN001
    return " ".join(re.sub(r"<[^>]+>", " ", response.get_data(as_text=True)).split())


def test_every_sheet_prints_one_code_and_its_public_page_answers_without_a_session_for_that_file(demo):
    response = dossier_of(demo, "LC35-2026-0001")
    pages = pdf_text(response.data)
    codes = {CODE.search(page).group(1) for page in pages}
    assert len(codes) == 1
    [code] = codes
    assert all(f"http://127.0.0.1:8000/verificar/{code}" in "".join(page.split()) for page in pages)
    public = demo.flask.test_client()  # no cookie, no token
    answer = public.get(f"/verificar/{code}")
    assert answer.status_code == 200, answer.get_data(as_text=True)[:300]
    text = page_text(answer)
    assert hashlib.sha256(response.data).hexdigest() in text
    assert "LC35-2026-0001" in text and "ÍNTEGRO" in text
    latest = demo.client.get("/checkpoints/latest").get_data(as_text=True).splitlines()
    assert latest[2] in text and f"tamanho {latest[1]}" in text
    assert public.get(f"/verificar/{code.lower().replace('-', '')}").status_code == 200  # as typed from paper


def test_the_same_unchanged_dossier_is_delivered_again_with_its_code_and_a_new_one_after_an_act(demo):
    first = dossier_of(demo, "LC35-2026-0002").data
    again = dossier_of(demo, "LC35-2026-0002").data
    assert again == first
    code = CODE.search(pdf_text(first)[0]).group(1)
    assert demo.app.repository.get(DossierIssue.id_for(code)).sha256 == hashlib.sha256(first).hexdigest()


def test_a_code_never_issued_is_a_404_page_in_portuguese(demo):
    public = demo.flask.test_client()
    for asked in ("ABCD-EFGH-JKMN-PQRS", "not-a-code"):
        answer = public.get(f"/verificar/{asked}")
        assert answer.status_code == 404 and answer.mimetype == "text/html"
        assert f"Nenhum dossiê foi emitido com o código de verificação {asked}." in page_text(answer)


def test_an_issuance_edited_in_the_database_is_found_by_the_full_verification_and_its_public_page(tmp_path):
    """The threat model's database administrator rewrites the SHA-256 an issuance recorded (to pass off another
    file): the chain and the log tell, in `verify` and on the public page, which no longer vouches for it."""
    api = ApiHarness(f"sqlite:///{tmp_path / 'tramita.sqlite'}", signer=Signer.generate(ORIGIN))
    try:
        number = open_1991_petition(api)["number"]
        delivered = dossier_of(api, number).data
        intact = page_text(api.flask.test_client().get(f"/verificar/{CODE.search(pdf_text(delivered)[0]).group(1)}"))
        assert hashlib.sha256(delivered).hexdigest() in intact and "foi alterado" not in intact
        audit = api.flask.extensions["tramita.audit"]
        audit.sign_checkpoint()
        assert audit.verify().ok
        digest = hashlib.sha256(delivered).hexdigest()
        with StoredEvents(api.url) as stored:
            originator, version, state = stored.event_of_type("DossierIssue.Issued")
            assert digest.encode() in state
            stored.set_state(originator, version, state.replace(digest.encode(), b"0" * 64))
        assert not audit.verify().ok
        code = CODE.search(pdf_text(delivered)[0]).group(1)
        answer = page_text(api.flask.test_client().get(f"/verificar/{code}"))
        assert "O registro desta emissão foi alterado no banco de dados" in answer
    finally:
        api.close()


def test_a_code_typed_from_paper_reads_o_as_zero_and_i_or_l_as_one():
    assert normal_code("k7qm 2xhd-9rta-b3ce") == "K7QM-2XHD-9RTA-B3CE"
    assert normal_code("O1IL-0000-0000-0000") == "0111-0000-0000-0000"
    assert normal_code("K7QM-2XHD-9RTA") is None and normal_code("K7QM-2XHD-9RTA-B3CU") is None
