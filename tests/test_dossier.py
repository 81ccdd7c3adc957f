"""The printable case file, `GET /cases/{id}/dossier.pdf`: every demo case renders, and what the PDF says (read
back with pypdf) is the case's number, every act with its label and legal date, every event's chain hash, the
deadlines, the case's verdict and the latest signed checkpoint's root; a long case is laid out in parts whose
pages are numbered as one; a process busy rendering answers 503 instead of queueing."""

from __future__ import annotations

import io
import re
from dataclasses import dataclass
from datetime import date, datetime, timedelta, timezone

import pytest
from pypdf import PdfReader

from api.dossier_pdf import PART_ROWS, parts, render
from audit.notes import Signer, open_checkpoint
from domain.demo import DOCUMENTS_1991, GUIOMARD, PLACIDO, attachment_name
from domain.lifecycle import act_catalogue
from api.dossier_words import Words
from audit.dossier import CONSEQUENCE_LABELS
from tests.api_client import ApiHarness, Clock
from tests.test_api_walk import open_1991_petition
from tests.test_chain import StoredEvents
from audit.demo_files import demo_files, described, seed_demo_with_documents
from projections.queries import case_deadlines

ORIGIN = "tramita.test/acre"


@dataclass
class TickingClock(Clock):
    """A clock that moves `step` at each reading while the demo is recorded (so that its events are recorded at
    different times, across midnight in UTC and in Rio Branco), then stands still once `step` is None."""

    now: datetime = datetime(2026, 11, 30, 3, 40, tzinfo=timezone.utc)
    step: timedelta | None = timedelta(minutes=7, seconds=13)

    def __call__(self) -> datetime:
        if self.step is not None:
            self.now += self.step
        return self.now


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory):  # noqa: ANN201
    """The demo (with its illustrative documents) on a signed SQLite deployment, its events recorded at times
    minutes apart, projected, with a checkpoint signed over all of it."""
    folder = tmp_path_factory.mktemp("dossier")
    clock = TickingClock()
    harness = ApiHarness(f"sqlite:///{folder / 'tramita.sqlite'}", signer=Signer.generate(ORIGIN), clock=clock,
                         config={"TRAMITA_SESSION_KEY": str(folder / "session.key")})
    seed_demo_with_documents(harness.app, harness.flask.extensions["tramita.documents"], say=lambda _: None)
    clock.step = None
    harness.projector.catch_up()
    harness.flask.extensions["tramita.audit"].sign_checkpoint()
    yield harness
    harness.close()


def pdf_text(data: bytes) -> list[str]:
    """Each page's text with its runs of white space made one space."""
    return [" ".join(page.extract_text().split()) for page in PdfReader(io.BytesIO(data)).pages]


def dossier_of(api: ApiHarness, case: str, role: str = "auditor"):  # noqa: ANN201
    return api.client.get(f"/cases/{case}/dossier.pdf", headers=api.headers(role))


def demo_numbers(api: ApiHarness) -> list[str]:
    numbers = [row["number"] for row in api.get("/cases").get_json()["items"]]
    assert len(numbers) >= 3  # the demo's cases (its district case was refused and recorded nothing)
    return numbers


def act_labels(api: ApiHarness, kind: str, on: date) -> dict[str, set[str]]:
    """Event class -> the Portuguese labels of the acts that record it (statute data, lifecycles.toml)."""
    labels: dict[str, set[str]] = {}
    for entry in act_catalogue(api.app.statute, on).values():
        labels.setdefault(entry.event, set()).add(entry.label)
    return labels


def test_every_demo_case_renders_a_pdf_naming_its_number_every_act_and_the_signed_root(demo):
    note = demo.client.get("/checkpoints/latest").get_data(as_text=True)
    root = note.splitlines()[2]
    assert open_checkpoint(note, demo.signer.verifier).size == demo.notifications()
    for number in demo_numbers(demo):
        response = dossier_of(demo, number)
        assert response.status_code == 200, response.get_data(as_text=True)[:500]
        assert response.mimetype == "application/pdf"
        assert response.headers["Content-Disposition"] == f'attachment; filename="{number}.pdf"'
        pages = pdf_text(response.data)
        text, solid = " ".join(pages), "".join(" ".join(pages).split())
        case = demo.get(f"/cases/{number}").get_json()
        assert pages[0].startswith(f"Dossiê do processo {number}")
        assert ORIGIN in pages[0] and "ÍNTEGRO" in pages[0]
        assert root in solid
        labels = act_labels(demo, case["kind"], date.fromisoformat(case["opened_on"]))
        events = demo.get(f"/cases/{number}/events").get_json()
        assert len(events) == case["version"]
        for event in events:
            assert Words.day(event["occurred_on"]) in text and event["hash"] in solid, event["sequence"]
            kind = event["type"].removeprefix("Case.")
            named = labels.get(kind, {CONSEQUENCE_LABELS.get(kind, event["type"])})
            assert any(label in text for label in named), (event["type"], named)
            assert kind not in text.replace("DocumentsAttached", "") or kind in CONSEQUENCE_LABELS
        for deadline in demo.get(f"/cases/{number}/deadlines").get_json():
            assert "".join(Words.article(deadline["article"]).split()) in solid  # a long article may wrap
            assert deadline["deadline"] not in text  # by what is due, never by its key


def test_the_dossier_of_a_petition_lists_the_art_9_documents_it_cites(demo):
    text = " ".join(pdf_text(dossier_of(demo, "LC35-1991-0001").data))
    petition = demo.get("/cases/LC35-1991-0001/events").get_json()[0]
    for item, reference in petition["payload"]["documents"].items():  # art-4-I: the law's words, Art. 4, I
        assert f"{Words.article(item)} {reference}" in text and item not in text
    assert "sem arquivo anexado" in text and "anexo 1" in text and "documents.0" not in text


def test_the_dossier_of_the_1991_case_gives_the_sha256_of_each_document_its_acts_attach(demo):
    text = " ".join(pdf_text(dossier_of(demo, "LC35-1991-0001").data))
    solid = "".join(text.split())
    digests = {reference: stored["sha256"] for reference, stored in described(demo_files()).items()}
    assert set(digests) == set(DOCUMENTS_1991)
    events = demo.get("/cases/LC35-1991-0001/events").get_json()
    attached = [d for e in events if e["type"] == "Case.DocumentsAttached" for d in e["payload"]["documents"]]
    assert {d["sha256"] for d in attached} == set(digests.values())
    for reference, digest in digests.items():
        assert digest in solid, reference
        assert "".join(attachment_name(reference).split()) in solid, reference


def test_every_sheet_is_numbered_as_a_case_file_s_folha_between_a_termo_de_abertura_and_de_encerramento(demo):
    pages = pdf_text(dossier_of(demo, "LC35-1991-0001").data)
    for number, page in enumerate(pages, start=1):
        assert f"fls. {number}" in page and "Processo LC35-1991-0001" in page
    assert "Termo de abertura" in pages[0] and "a partir de fls. 1" in pages[0]
    assert "Termo de encerramento" in pages[-1]
    assert f"às fls. {len(pages)}, contendo {len(pages)} folhas" in pages[-1]


def test_every_event_of_the_1991_case_is_recorded_at_the_rio_branco_time_its_page_shows(demo):
    """The case's page (in Rio Branco's time) and the dossier say the same time for each event, UTC beside it."""
    from tests.test_pages import sign_in

    client = demo.flask.test_client()
    sign_in(client, demo.token("auditor"))
    page = client.get("/processos/LC35-1991-0001").get_data(as_text=True)
    shown = {int(n): " ".join(re.sub(r"<[^>]+>", " ", cells[3]).split())[:16]  # dd/mm/aaaa hh:mm, then a mark
             for n, cells in ((m.group(1), re.findall(r"<td>(.*?)</td>", m.group(2), re.S))
                              for m in re.finditer(r'<tr class="[^"]*" data-sequence="(\d+)"[^>]*>(.*?)</tr>',
                                                   page, re.S))}
    text = " ".join(pdf_text(dossier_of(demo, "LC35-1991-0001").data))
    events = demo.get("/cases/LC35-1991-0001/events").get_json()
    assert len(shown) == len(events) and len({shown[n] for n in shown}) > 10  # times that differ
    for event in events:
        recorded = datetime.fromisoformat(event["recorded_at"])
        utc = recorded.astimezone(timezone.utc).strftime("%d/%m/%Y %H:%M:%S UTC")
        row = f"{event['sequence']} {Words.day(event['occurred_on'])} {shown[event['sequence']]} "
        assert row in text, (row, event["recorded_at"])
        assert utc in text and shown[event["sequence"]][:16] != utc[:16]


def test_a_case_longer_than_a_part_is_laid_out_in_parts_numbered_as_one_document(demo):
    dossier = demo.flask.extensions["tramita.audit"].dossier("LC35-1991-0001", due_soon_days=5,
                                                                 deadlines=case_deadlines)
    assert len(dossier["events"]) > 10
    pages = pdf_text(render(dossier, rows_per_part=10))
    solid = "".join("".join(pages).split())
    assert all(f"fls. {n}" in page for n, page in enumerate(pages, start=1))
    positions = [solid.index(event["hash"]) for event in dossier["events"]]
    assert positions == sorted(positions)  # every event once, in the order of the case


def test_no_part_of_a_thousand_event_case_holds_more_than_a_parts_rows():
    rows = [{"sequence": n} for n in range(1, 1001)]
    dossier = {"events": rows, "deadlines": [{"deadline": "d"}] * 3, "documents": rows[:450]}
    cut = list(parts(dossier))
    assert cut[0]["cover"] and cut[-2]["verification"] and cut[-1]["closing"]
    assert all(sum(len(p["rows"]) for p in part["pieces"]) <= PART_ROWS for part in cut)
    timeline = [row for part in cut for p in part["pieces"] if p["section"] == "timeline" for row in p["rows"]]
    assert timeline == rows
    continued = [p["continued"] for part in cut for p in part["pieces"] if p["section"] == "timeline"]
    assert continued[0] is False and all(continued[1:])


def test_any_role_that_reads_cases_gets_the_dossier_and_no_token_gets_401(demo):
    assert dossier_of(demo, "LC35-2026-0003", role="deputy").status_code == 200
    anonymous = demo.client.get("/cases/LC35-2026-0003/dossier.pdf")
    assert anonymous.status_code == 401 and anonymous.mimetype == "application/problem+json"
    assert anonymous.headers["WWW-Authenticate"].startswith("Bearer")


def test_an_unknown_case_is_404_naming_the_number_asked_for(demo):
    response = dossier_of(demo, "LC35-2099-0042")
    assert response.status_code == 404 and response.mimetype == "application/problem+json"
    assert "LC35-2099-0042" in response.get_json()["detail"]
    assert response.get_json()["type"].endswith("/case-not-found")


def test_a_process_busy_rendering_answers_503_with_retry_after_and_an_unchanged_dossier_from_its_cache(demo):
    renderer, today = demo.flask.extensions["tramita.dossier"], demo.clock.now
    demo.clock.now = today + timedelta(days=1)  # a new legal day: every deadline's status is asked anew
    try:
        assert dossier_of(demo, "LC35-2026-0002").status_code == 200  # rendered once, kept
        renderer._slots.acquire()  # every slot of this process taken (RENDERS is 1)
        try:
            busy = dossier_of(demo, "LC35-2026-0001", role="tre")
            again = dossier_of(demo, "LC35-2026-0002")
        finally:
            renderer._slots.release()
    finally:
        demo.clock.now = today
    assert busy.status_code == 503 and busy.mimetype == "application/problem+json"
    assert busy.headers["Retry-After"].isdigit() and busy.get_json()["type"].endswith("/dossier-busy")
    assert again.status_code == 200 and again.mimetype == "application/pdf"


def test_a_case_altered_in_the_database_is_shown_as_failing_verification_not_from_the_cache(tmp_path):
    api = ApiHarness(f"sqlite:///{tmp_path / 'tramita.sqlite'}", signer=Signer.generate(ORIGIN))
    try:
        case = open_1991_petition(api)["case_id"]
        api.act(case, "finding-recorded", "ibge", date(1991, 12, 20), item="art-4-I", value=2100,
                by_origin={PLACIDO: 1000, GUIOMARD: 1100}, document="Laudo IBGE 7/1991")
        api.projector.catch_up()
        api.flask.extensions["tramita.audit"].sign_checkpoint()
        intact = " ".join(pdf_text(dossier_of(api, case).data))
        assert "ÍNTEGRO" in intact and "Laudo IBGE 7/1991" in intact
        with StoredEvents(api.url) as stored:
            [(state,)] = stored.execute("SELECT state FROM {table} WHERE originator_id = ? AND "
                                        "originator_version = 2", stored.id_of(api.app.resolve_case(case)))
            stored.set_state(stored.id_of(api.app.resolve_case(case)), 2,
                             bytes(state).replace(b"Laudo IBGE 7/1991", b"Laudo IBGE 8/1991"))
        altered = " ".join(pdf_text(dossier_of(api, case).data))
        assert "FALHOU" in altered and "ÍNTEGRO" not in altered
        assert "a partir do evento 2" in altered
    finally:
        api.close()


def test_a_case_whose_stored_event_no_longer_decodes_still_gets_a_dossier_naming_the_event(tmp_path):
    api = ApiHarness(f"sqlite:///{tmp_path / 'tramita.sqlite'}", signer=Signer.generate(ORIGIN))
    try:
        opened = open_1991_petition(api)
        with StoredEvents(api.url) as stored:
            stored.set_state(stored.id_of(api.app.resolve_case(opened["case_id"])), 1, b"\xff not json")
        response = dossier_of(api, opened["number"])
        assert response.status_code == 200, response.get_data(as_text=True)[:500]
        text = " ".join(pdf_text(response.data))
        assert opened["number"] in text and "FALHOU" in text and "does not decode" in text
    finally:
        api.close()


def test_an_unsigned_deployment_says_it_has_no_key_and_no_checkpoint(tmp_path):
    api = ApiHarness(f"sqlite:///{tmp_path / 'tramita.sqlite'}")
    try:
        case = open_1991_petition(api)["number"]
        text = " ".join(pdf_text(dossier_of(api, case).data))
        assert "sem chave de assinatura" in text and "Nenhum checkpoint assinado" in text
    finally:
        api.close()


def test_the_dossier_of_a_case_the_federal_gate_holds_states_the_impediment_in_portuguese(demo):
    """CF art. 18 §4: the 2026 creation waits on the gate; its dossier's cover says so as its page does."""
    cover = pdf_text(dossier_of(demo, "LC35-2026-0003").data)[0]
    assert "Impedimentos em aberto" in cover
    assert "CF, Art. 18, § 4: nenhuma lei complementar federal fixa o período para este ato" in cover
    assert "no federal complementary law" not in cover
    assert "Impedimentos em aberto" not in pdf_text(dossier_of(demo, "LC35-1991-0001").data)[0]
