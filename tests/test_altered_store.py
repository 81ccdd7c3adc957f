"""No act is judged on a store the hash chain or the audit log contradicts: an administrator who deletes Feijó's
`Municipality.Frozen` event (or a case's last event, one in its middle, or alters an event's stored bytes) and
restarts the API finds the next act that reads that aggregate refused `409 stored-events-altered`, naming the
aggregate and the event; nothing is recorded but the tamper alarm (a system alert, once); and the case's own
verdict (`GET /cases/{id}/verify`, its page, its dossier) names the damage, also in the municipality it depends on.

Each store is served by the API over a SQLite file and over PostgreSQL; the audit log is appended
by the projector, as in a deployment, before the rows are edited.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import date
from uuid import UUID

import pytest

from domain.amendments import StatuteAmendments
from domain.registry import Municipality
from tests.api_client import ApiHarness
from tests.conftest import BACKENDS
from tests.test_chain import StoredEvents
from tests.test_district_refusals import DAY, FEIJO, FREEZE_STARTS, LAW, freezing_creation, ready_for_law
from tests.test_dossier import pdf_text
from tests.test_pages import sign_in, text

ALTERED = "stored-events-altered"
PORTUGUESE = {"Accept-Language": "pt-BR"}


class Deployment:
    """The API over one store, restarted at will (a new application and app object on the same database)."""

    def __init__(self, url: str) -> None:
        self.url = url
        self.api = ApiHarness(url)

    def log(self) -> None:
        """What the projector does in a deployment: the read models and the audit log's tree brought up to date."""
        self.api.projector.catch_up()

    def restart(self) -> ApiHarness:
        """A new application and API on the same store; the tokens issued before are still the bodies' own."""
        tokens = self.api._tokens
        self.api.close()
        self.api = ApiHarness(self.url)
        self.api._tokens.update(tokens)
        return self.api

    def close(self) -> None:
        self.api.close()


@pytest.fixture(params=BACKENDS)
def deployment(request: pytest.FixtureRequest, new_database_url) -> Iterator[Deployment]:  # noqa: ANN001
    """The API over SQLite and over PostgreSQL, where an act reads the log's leaves and the store's events in one
    statement."""
    served = Deployment(new_database_url(request.param))
    yield served
    served.close()


def recorded_since(api: ApiHarness, before: int) -> list[object]:
    """The events stored after notification `before`, decoded."""
    return recorded_since_app(api.app, before)


def recorded_since_app(app: object, before: int) -> list[object]:
    return [app.mapper.to_domain_event(n) for n in app.recorder.select_notifications(before + 1, 1000)]


def tamper_alarms(api: ApiHarness) -> list[object]:
    return [event for event in recorded_since(api, 0)
            if type(event).__qualname__ == "Alert.SystemRaised" and event.kind == "tamper-alarm"]


def assert_refused(response, label: str, version: int, reason: str) -> dict:  # noqa: ANN001
    body = response.get_json()
    assert response.status_code == 409 and response.mimetype == "application/problem+json", body
    assert body["type"].endswith(f"/{ALTERED}")
    assert f"the stored events of {label} contradict" in body["detail"]
    assert f"at its event {version}: {reason}" in body["detail"], body["detail"]
    return body


def event_rows(url: str, aggregate_id: UUID) -> list[tuple[int, str, bytes]]:
    with StoredEvents(url) as stored:
        rows = stored.execute("SELECT originator_version, topic, state FROM {table} WHERE originator_id = ? "
                              "ORDER BY originator_version", stored.id_of(aggregate_id))
    return [(int(version), topic, bytes(state)) for version, topic, state in rows]


def delete_event(url: str, aggregate_id: UUID, version: int) -> None:
    with StoredEvents(url) as stored:
        stored.execute("DELETE FROM {table} WHERE originator_id = ? AND originator_version = ?",
                       stored.id_of(aggregate_id), version)


def feijo_frozen(served: Deployment) -> tuple[object, str]:
    """A district case of Feijó ready for its law, then a creation case over Feijó, which freezes it (Art. 38):
    the district law is refused under Art. 38. Both logged."""
    api = served.api
    district = ready_for_law(api, "district_creation")
    blocking = freezing_creation(api, FREEZE_STARTS)
    name, role, municipality, _ = district.attempt("district-law-enacted")
    refused = api.client.post(f"/cases/{district.case}/acts/{name}",
                              json={"occurred_on": (FREEZE_STARTS + DAY).isoformat(), **LAW},
                              headers=api.headers(role, municipality, **{"If-Match": "*"}))
    assert refused.status_code == 422 and refused.get_json()["article"] == "art-38"
    api.token("auditor")
    served.log()
    return district, blocking


def post_district_law(api: ApiHarness, district: object, on: date, **headers: str):  # noqa: ANN201
    name, role, municipality, _ = district.attempt("district-law-enacted")
    return api.client.post(f"/cases/{district.case}/acts/{name}", headers=api.headers(
        role, municipality, **{"If-Match": "*", **headers}),
                           json={"occurred_on": on.isoformat(), **LAW})


# ---------------------------------------------------------------------------------- a registry event deleted


def test_a_district_law_after_feijos_frozen_event_was_deleted_is_refused_naming_feijo_and_nothing_is_recorded(
        deployment):
    served = deployment
    district, blocking = feijo_frozen(served)
    feijo = Municipality.id_for(FEIJO)
    frozen = [version for version, topic, _ in event_rows(served.url, feijo) if topic.endswith("Municipality.Frozen")]
    assert frozen == [event_rows(served.url, feijo)[-1][0]]  # the freeze is Feijó's last event
    delete_event(served.url, feijo, frozen[0])
    api = served.restart()
    district.api = api
    before = api.notifications()

    refused = assert_refused(post_district_law(api, district, FREEZE_STARTS + 2 * DAY), f"Feijó ({FEIJO})",
                             frozen[0], "the audit log holds it but the store no longer does: it was deleted")
    alarms = [event for event in recorded_since(api, before)]
    assert [type(e).__qualname__ for e in alarms] == ["Alert.SystemRaised"]  # the alarm, and no act
    assert alarms[0].kind == "tamper-alarm" and f"at its event {frozen[0]}" in alarms[0].message
    again = post_district_law(api, district, FREEZE_STARTS + 2 * DAY, **PORTUGUESE)
    assert again.status_code == 409 and again.get_json()["type"] == refused["type"]
    assert again.get_json()["detail"].startswith(f"os eventos gravados de Feijó ({FEIJO}) contradizem")
    assert "o registro de auditoria o contém, mas o armazenamento não" in again.get_json()["detail"]
    assert len(recorded_since(api, before)) == 1  # the same alarm is not recorded twice

    verdict = api.get(f"/cases/{blocking}/verify").get_json()
    assert verdict["ok"] is False
    assert [(f["kind"], f["label"], f["version"]) for f in verdict["findings"]] == [
        ("deleted", f"Feijó ({FEIJO})", frozen[0])]


def test_the_case_page_and_dossier_of_a_case_whose_municipality_lost_an_event_name_the_damage(deployment):
    district, blocking = feijo_frozen(deployment)
    feijo = Municipality.id_for(FEIJO)
    delete_event(deployment.url, feijo, event_rows(deployment.url, feijo)[-1][0])
    api = deployment.restart()
    number = api.get(f"/cases/{blocking}").get_json()["number"]  # the case itself is intact: it reads
    sign_in(api.client, api.token("auditor"))
    page = api.client.get(f"/processos/{number}")
    assert page.status_code == 200
    assert f"deleted: Feijó ({FEIJO}): events" in text(page) and "were logged and are no longer stored" in text(page)
    dossier = api.flask.extensions["tramita.audit"].dossier(number, due_soon_days=5, deadlines=lambda *a, **k: [])
    assert dossier["verdict"]["ok"] is False and dossier["verdict"]["findings"][0]["label"] == f"Feijó ({FEIJO})"
    pdf = api.client.get(f"/cases/{blocking}/dossier.pdf", headers=api.headers("auditor"))
    assert pdf.status_code == 200
    assert "FALHOU" in " ".join(pdf_text(pdf.data)) and f"Feijó ({FEIJO})" in " ".join(pdf_text(pdf.data))


# ---------------------------------------------------------------------------------- a case event deleted or altered


def blocking_case_logged(served: Deployment) -> tuple[str, UUID, str]:
    """Feijó's freezing creation case with its Art. 4 findings recorded and logged: (case id, its UUID, number)."""
    api = served.api
    case = freezing_creation(api, FREEZE_STARTS)
    for item, role, value in (("art-4-I", "ibge", 20000), ("art-4-II", "tre", 9000)):
        api.act(case, "finding-recorded", role, FREEZE_STARTS + DAY, item=item, value=value, document=f"Laudo {item}")
    api.token("auditor")
    served.log()
    return case, api.app.resolve_case(case), api.get(f"/cases/{case}").get_json()["number"]


def a_finding(api: ApiHarness, case: str, **headers: str):  # noqa: ANN201
    return api.client.post(f"/cases/{case}/acts/finding-recorded", headers=api.headers(
        "ibge", **{"If-Match": "*", **headers}),
                           json={"occurred_on": (FREEZE_STARTS + 2 * DAY).isoformat(), "item": "art-4-IV",
                                 "value": 3000, "document": "Laudo art-4-IV"})


def refused_everywhere(api: ApiHarness, case: str, number: str, version: int, reason: str, *,
                       replays: bool = True) -> None:
    """The act refused 409 naming the case and the event, only the alarm recorded; the case's read refused alike;
    its verdict, its page and its dossier say it is not intact (the page shows what is stored under the verdict, or,
    when the stored events do not even replay, the refusal)."""
    before = api.notifications()
    assert_refused(a_finding(api, case), number, version, reason)
    assert [type(e).__qualname__ for e in recorded_since(api, before)] == ["Alert.SystemRaised"]
    assert [a for a in tamper_alarms(api) if a.subject.endswith(f":{version}")]
    assert_refused(api.get(f"/cases/{case}"), number, version, reason)
    assert len(recorded_since(api, before)) == 1
    assert api.get(f"/cases/{case}/verify").get_json()["ok"] is False
    sign_in(api.client, api.token("auditor"))
    page = api.client.get(f"/processos/{number}")
    if replays:  # what is stored, under the verdict naming the damage
        assert page.status_code == 200 and 'id="verdict" class="altered"' in page.get_data(as_text=True)
    else:  # the stored events do not even replay: the refusal, as a page
        assert page.status_code == 409 and f"de {number} contradizem" in text(page)
        assert f"no seu evento {version}" in text(page)
    dossier = api.flask.extensions["tramita.audit"].dossier(number, due_soon_days=5, deadlines=lambda *a, **k: [])
    assert dossier["verdict"]["ok"] is False


def test_a_case_whose_last_event_was_deleted_refuses_its_next_act_naming_the_event(deployment):
    case, case_id, number = blocking_case_logged(deployment)
    last = event_rows(deployment.url, case_id)[-1][0]
    delete_event(deployment.url, case_id, last)
    refused_everywhere(deployment.restart(), case, number, last,
                       "the audit log holds it but the store no longer does: it was deleted")


@pytest.mark.parametrize("renumbered", [False, True], ids=["gap-left", "tail-renumbered"])
def test_a_case_whose_middle_event_was_deleted_refuses_its_next_act_naming_the_event(deployment, renumbered):
    case, case_id, number = blocking_case_logged(deployment)
    with StoredEvents(deployment.url) as stored:
        if renumbered:
            stored.remove_and_close_the_gap(case_id, 2)
        else:
            stored.execute("DELETE FROM {table} WHERE originator_id = ? AND originator_version = 2",
                           stored.id_of(case_id))
    reason = ("its prev_hash is not the hash of the event stored before it" if renumbered
              else "the events before it are not stored: they were deleted")
    refused_everywhere(deployment.restart(), case, number, 2, reason, replays=renumbered)


def test_a_case_event_whose_stored_bytes_were_altered_refuses_the_next_act_naming_the_event(deployment):
    case, case_id, number = blocking_case_logged(deployment)
    version, _, state = event_rows(deployment.url, case_id)[1]
    assert b'"value":20000' in state
    with StoredEvents(deployment.url) as stored:
        stored.set_state(stored.id_of(case_id), version, state.replace(b'"value":20000', b'"value":90000'))
    refused_everywhere(deployment.restart(), case, number, version,
                       "its stored content no longer gives its hash: its stored bytes were altered")


def test_a_case_event_rewritten_with_its_hash_recomputed_is_refused_by_the_log(deployment):
    """The chain alone is fooled by an event rewritten with its hash recomputed by the published recipe, at the end
    of the case (nothing after it links to it): the log holds the hash recorded."""
    from tests.test_audit_tamper import _rehash

    case, case_id, number = blocking_case_logged(deployment)
    version, topic, state = event_rows(deployment.url, case_id)[-1]
    document = json.loads(state)
    document["value"] = 1
    document["hash"] = _rehash(deployment.api.app, case_id, version, topic, document)
    with StoredEvents(deployment.url) as stored:
        stored.set_state(stored.id_of(case_id), version, json.dumps(document).encode())
    api = deployment.restart()
    assert api.app.verify(case).ok  # the chain alone holds
    refused_everywhere(api, case, number, version,
                       "its hash is not the one the audit log holds for it: it was rewritten after it was logged")


def test_an_event_deleted_while_its_case_is_kept_in_memory_refuses_the_next_act(deployment):
    """No restart: the API's pool holds the case, read before the row went; its next act reads the last event
    again and finds it gone."""
    case, case_id, number = blocking_case_logged(deployment)
    api = deployment.api
    assert api.get(f"/cases/{case}").status_code == 200  # pooled
    last = event_rows(deployment.url, case_id)[-1][0]
    delete_event(deployment.url, case_id, last)
    before = api.notifications()
    assert_refused(a_finding(api, case), number, last,
                   "the audit log holds it but the store no longer does: it was deleted")
    assert [type(e).__qualname__ for e in recorded_since(api, before)] == ["Alert.SystemRaised"]


def test_an_intact_store_records_acts_as_before_with_the_log_checked(deployment):
    case, case_id, number = blocking_case_logged(deployment)
    api = deployment.restart()
    assert a_finding(api, case).status_code == 200
    deployment.log()  # the act just recorded is now in the log too: the pooled case is checked against it
    assert a_finding(api, case).status_code == 200
    assert tamper_alarms(api) == [] and api.get(f"/cases/{case}/verify").get_json()["ok"] is True


def test_on_postgresql_an_act_reads_the_logs_leaves_and_the_stored_events_in_one_statement_as_the_two_reads_give_them(
        deployment):
    """One snapshot, one round trip: the same leaves as `logged` and the same events as the recorder's read, from
    the first event or after a version, with another aggregate's alongside (the statute's amendments, none here);
    on SQLite the pool reads them apart."""
    from audit.logged import LoggedHashes
    from infrastructure.store import open_store

    case, case_id, number = blocking_case_logged(deployment)
    app = deployment.api.app
    store = open_store(deployment.url)
    try:
        hashes = LoggedHashes(store, app.recorder)
        if store.dialect != "postgresql":
            assert hashes.logged_and_stored(case_id, 1, None) is None
            return
        events = app.recorder.select_events(case_id)
        assert len(events) == 3 and len(hashes.logged(case_id, 1)) == len(events)
        feijo = Municipality.id_for(FEIJO)

        def rows(events: list) -> list[tuple]:  # noqa: ANN401
            return [(e.originator_id, e.originator_version, e.topic, e.state) for e in events]

        for from_version, after, alongside in ((1, None, None), (2, 1, (feijo, None)), (3, 2, (feijo, 2)),
                                               (4, None, (StatuteAmendments.ID, None))):
            logged, stored, beside = hashes.logged_and_stored(case_id, from_version, after, alongside)
            assert logged == hashes.logged(case_id, from_version)
            assert rows(stored) == rows(app.recorder.select_events(case_id, gt=after))
            assert rows(beside) == (rows(app.recorder.select_events(alongside[0], gt=alongside[1]))
                                    if alongside else [])
        assert beside == [] and len(hashes.logged_and_stored(case_id, 1, None, (feijo, None))[2]) == len(
            app.recorder.select_events(feijo)) > 0
    finally:
        store.close()


# ---------------------------------------------------------------------------------- the statute's amendments


def test_an_act_after_the_last_amendment_of_the_statute_was_deleted_is_refused_naming_the_amendments(tmp_path):
    """Every act reads the statute in force, the shipped data plus the amendments recorded: one deleted after it
    was logged would change the law the next act is judged by."""
    from audit.log import AuditLog
    from audit.logged import LoggedHashes
    from domain.errors import StoredEventsAlteredError
    from infrastructure.store import open_store
    from domain.demo import IBGE
    from tests.test_statute_amendments import GATE, new_app, open_period

    url = f"sqlite:///{tmp_path / 'tramita.sqlite'}"
    app, store = new_app(url), open_store(url)
    open_period(app)
    tree = AuditLog(app, store)
    tree.migrate()
    tree.catch_up()
    version = event_rows(url, StatuteAmendments.ID)[-1][0]
    delete_event(url, StatuteAmendments.ID, version)
    restarted = new_app(url)
    restarted.check_against(LoggedHashes(store))
    before = restarted.recorder.max_notification_id()
    with pytest.raises(StoredEventsAlteredError) as refused:
        restarted.record_figure(FEIJO, IBGE, date(2027, 4, 1), figure="population", value=20000,
                                as_of=date(2027, 3, 1), source="IBGE")
    assert str(refused.value).startswith("the stored events of the statute's amendments contradict")
    assert refused.value.version == version and "it was deleted" in str(refused.value)
    [alarm] = recorded_since_app(restarted, before)  # the alarm only, read with the statute as last read
    assert alarm.kind == "tamper-alarm" and alarm.subject == f"stored-events:{StatuteAmendments.ID}:{version}"
    assert restarted.shipped_statute.value(GATE, date(2027, 4, 1)) == "closed"
    store.close()
