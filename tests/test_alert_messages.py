"""An alert's webhook body says it in words beside its codes: `message`, one sentence in Portuguese (the case, what
is due by name, the article as the law writes it, the body that must act and its municipality by name, the due date
as dd/mm/aaaa, the days late), `message_en` in English, and the named fields; the codes stay as they were. The words
are the e-mails' (domain/alert_words.py)."""

from __future__ import annotations

import re
import threading
from datetime import datetime, timezone

import pytest
from standardwebhooks import Webhook as Verifier

from api.i18n import compiled_catalogue
from domain.acts import Actor
from domain.alert_words import alert_words
from domain.application import Tramita
from domain.demo import seed_demo
from domain.words import DEADLINE_NAMES
from infrastructure.mail import MailSettings, told
from infrastructure.persistence import persistence_env
from infrastructure.store import open_store
from projections.projector import Projector
from scheduler.config import SchedulerConfig
from scheduler.jsonlog import Wording, alert_fields
from scheduler.leader import NoLeadership
from scheduler.scan import SCHEDULER, scan
from scheduler.service import run
from tests.test_article_rules import XAPURI, creation_enacted, install, new_app
from tests.test_scheduler_webhook import SECRET, Server
from tramita.cli.processes import alerts_in_portuguese, mailed_in_portuguese

#: The demo's clock: its 2026 requisitions to the IBGE and the TRE (due 09/11/2026) unanswered four weeks later.
DEMO_DAY = datetime(2026, 12, 7, 14, tzinfo=timezone.utc)
PORTUGUESE = compiled_catalogue("pt_BR").gettext
#: Codes that must never stand where words belong in a sentence for people (in Portuguese, no English kind either).
CODES = re.compile(r"new:|art-\d|\b[a-z]+(-[a-z]+)+\b")
SLUGS = re.compile(CODES.pattern + r"|\b(ibge|tre|missed|breach)\b")


@pytest.fixture
def demo():
    now = [DEMO_DAY]
    app = Tramita(persistence_env("memory://"), clock=lambda: now[0])
    seed_demo(app, say=lambda line: None)
    store = open_store("memory://")
    Projector(app, store).migrate()
    yield app, store
    store.close()
    app.close()


def test_a_demo_alert_reaches_the_webhook_signed_with_its_codes_and_a_portuguese_sentence_naming_everything(demo):
    app, store = demo
    receiver = Server([200])
    try:
        config = mailed_in_portuguese(SchedulerConfig("memory://", webhook_url=receiver.url, webhook_tries=1,
                                                      webhook_secret=SECRET))
        lines: list[tuple[str, dict]] = []
        assert run(config, app, store, NoLeadership(), stop=threading.Event(), once=True,
                   log=lambda event, **fields: lines.append((event, fields)),
                   wording=alerts_in_portuguese(app, config)) == 0
    finally:
        receiver.close()
    signed = {(r.headers["webhook-id"]): Verifier(SECRET).verify(r.body, r.headers) for r in receiver.requests}
    [ibge] = [body for body in signed.values() if (body["who"], body["kind"]) == ("ibge", "missed")]
    assert (ibge["case_number"], ibge["deadline"], ibge["article"], ibge["due_on"], ibge["days_overdue"]) == (
        "LC35-2026-0003", "requisition-answer:R1", "art-10", "2026-11-09", 28)  # the codes, as receivers read them
    assert ibge["message"] == ("Prazo vencido no processo LC35-2026-0003: resposta à requisição R1 (LC 35/1991, "
                               "Art. 10), a cargo de IBGE, com vencimento em 09/11/2026, vencido há 28 dia(s).")
    assert ibge["message_en"] == ("Deadline missed in case LC35-2026-0003: answer to requisition R1 (LC 35/1991, "
                                  "Art. 10), by IBGE, due on 2026-11-09, 28 day(s) late.")
    assert (ibge["kind_name"], ibge["who_name"], ibge["deadline_name"], ibge["article_text"], ibge["due_on_text"],
            ibge["municipality_name"]) == ("Prazo vencido", "IBGE", "resposta à requisição R1", "Art. 10",
                                           "09/11/2026", None)
    for body in signed.values():
        assert re.search(r"\b\d{2}/\d{2}/\d{4}\b", body["message"]) and not SLUGS.search(body["message"]), body
    [breach] = [body for body in signed.values() if body["kind"] == "breach"]
    assert breach["message"].startswith("Requisição recusada (infração) no processo LC35-2026-0003")
    assert "Art. 10, § 1" in breach["message"]
    [tre] = [body for body in signed.values() if body["who"] == "tre"]
    assert "a cargo de Tribunal Regional Eleitoral (TRE)" in tre["message"]
    logged = {fields["alert_id"]: fields for event, fields in lines if event == "alert"}
    assert {alert_id: logged[alert_id]["message"] for alert_id in signed} == {
        alert_id: body["message"] for alert_id, body in signed.items()}  # the log line says what the body says


def test_a_municipalitys_alert_names_it_with_its_ibge_code_and_one_a_law_created_says_it_has_no_code_yet():
    app = new_app()
    case = creation_enacted(app)
    install(app, case)
    wording = alerts_in_portuguese(app, mailed_in_portuguese(SchedulerConfig("memory://")))
    bodies = {body["deadline"]: body for body in (
        alert_fields(app.get_alert(alert_id), wording)
        for alert_id in app.raise_alerts(case, Actor("scheduler", "scheduler"), thresholds=(5, 1)))}
    documents = bodies[f"personnel-documents:{XAPURI}"]
    assert documents["municipality"] == XAPURI and documents["municipality_name"] == "Xapuri"
    assert documents["article_text"] == "Art. 26, parágrafo único"
    assert documents["deadline_name"] == "documentos do pessoal, enviados por Xapuri"
    assert "a cargo de município de origem — Xapuri (IBGE 1200708), com vencimento em 01/01/1993" in \
        documents["message"]
    organic = bodies["organic-law"]
    assert organic["municipality"].startswith("new:") and organic["municipality_name"] == "Vila Nova"
    assert ("a cargo de Câmara Municipal — Vila Nova, ainda sem código IBGE (criado pelo processo "
            f"{organic['case_number']})") in organic["message"]
    assert "vencido há 12.205 dia(s)" in organic["message"]  # Babel's pt-BR grouping
    for body in bodies.values():
        assert not SLUGS.search(body["message"]), body["message"]
        assert not CODES.search(body["message_en"]), body["message_en"]


def test_a_system_alert_keeps_its_subject_and_message_and_says_its_kind_in_portuguese(demo):
    app, _ = demo
    raised = app.raise_system_alert(SCHEDULER, kind="projection-failure", subject="cases:x", message="cannot write")
    body = alert_fields(app.get_alert(raised), Wording(PORTUGUESE))
    assert (body["kind"], body["subject"], body["message"], body["message_en"]) == (
        "projection-failure", "cases:x", "cannot write", "cannot write")
    assert body["kind_name"] == "uma projeção não conseguiu aplicar um evento"
    assert body["case_id"] is None and body["due_on"] is None


def test_the_mail_and_the_webhook_say_an_alert_with_the_same_words(demo):
    app, store = demo
    for alert in scan(app, store, thresholds=(5, 1), projector=Projector(app, store)).raised:
        body = alert_fields(alert, Wording(PORTUGUESE))
        mailed = told(body, MailSettings(gettext=PORTUGUESE), ["resposta"])
        said = alert_words(body, PORTUGUESE)
        assert (mailed.state, mailed.article) == (body["kind_name"], body["article_text"]) == (said.state,
                                                                                                said.article)
        assert dict(mailed.lines)["Quem deve agir"] == said.who and said.who in body["message"]


def test_every_deadline_has_a_portuguese_name_for_the_sentences():
    assert all(PORTUGUESE(name) != name for name in DEADLINE_NAMES.values())
