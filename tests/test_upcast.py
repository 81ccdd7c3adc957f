"""A stored event outlives its class's shape: `AccessToken.Issued` gained `expires_on` (class version 2); a token
issued before (the fixture store, tests/fixtures/v1) loads through the upcast as valid until revoked, and is still
hashed as it was recorded; a token issued now is stored at version 2 and stops authenticating after its last day."""

from __future__ import annotations

import json
import shutil
from datetime import date, datetime, timezone

import pytest

from audit.reading import read_stored
from domain import chain
from domain.access import AccessToken
from domain.acts import Actor
from domain.errors import AuthenticationError, InvalidActError
from tests.stores import make_app
from tests.test_fixture_store import FIXTURE
from tramita.cli import main

ADMIN = Actor("admin", "token-administrator")


class Clock:
    def __init__(self, day: date) -> None:
        self.now = datetime(day.year, day.month, day.day, 15, 0, tzinfo=timezone.utc)  # 11:00 in Rio Branco

    def __call__(self) -> datetime:
        return self.now


@pytest.fixture
def earlier_store(tmp_path) -> str:
    shutil.copy(FIXTURE / "store.sqlite", tmp_path / "store.sqlite")
    return f"sqlite:///{tmp_path / 'store.sqlite'}"


def stored_state(app, aggregate_id) -> dict:
    notifications = app.recorder.select_notifications(1, 10_000)
    return json.loads(next(n.state for n in notifications if n.originator_id == aggregate_id and
                           n.originator_version == 1))


def test_a_token_issued_before_tokens_had_a_last_day_loads_as_valid_until_revoked_and_hashes_as_recorded(
        earlier_store):
    app = make_app(earlier_store, seed=False)
    tokens = app.tokens()
    assert [(t.name, t.revoked_on is None) for t in tokens] == [("fixture auditor", True), ("fixture clerk", False)]
    kept = tokens[0]
    assert "class_version" not in stored_state(app, kept.id) and "expires_on" not in stored_state(app, kept.id)
    assert kept.expires_on is None and not kept.expired_on(date(2199, 12, 31))
    issued = next(iter(app.events.get(kept.id)))
    assert issued.expires_on is None and issued.added_by_upcast == ["expires_on"]
    assert chain.hash_of(issued) == issued.hash  # the upcast's field is not hashed: the event as recorded
    assert "expires_on" not in chain.export_document(issued)
    assert all(report.ok for report in app.verify_all())


def test_a_token_issued_now_is_stored_at_class_version_2_with_its_last_day_and_verifies(earlier_store):
    app = make_app(earlier_store, seed=False, clock=Clock(date(2026, 12, 1)))
    issued = app.issue_token(ADMIN, name="clerk of the TRE", role="tre", expires_on=date(2026, 12, 10))
    state = stored_state(app, issued.id)
    assert state["class_version"] == 2 and state["expires_on"] == {"_type_": "date_iso", "_data_": "2026-12-10"}
    notification = app.recorder.select_notifications(app.recorder.max_notification_id(), 1)[0]
    assert read_stored(app, notification).content_ok
    event = next(iter(app.events.get(issued.id)))
    assert not hasattr(event, chain.UPCAST_MARK) and chain.hash_of(event) == event.hash
    assert chain.export_document(event)["expires_on"] == {"$date": "2026-12-10"}
    assert all(report.ok for report in app.verify_all())


@pytest.mark.parametrize("day, admitted", [(date(2026, 12, 9), True), (date(2026, 12, 10), True),
                                           (date(2026, 12, 11), False)])
def test_a_token_authenticates_through_its_last_day_and_not_the_day_after(day, admitted):
    clock = Clock(date(2026, 12, 1))
    app = make_app("memory://", clock=clock)
    issued = app.issue_token(ADMIN, name="clerk of the TRE", role="tre", expires_on=date(2026, 12, 10))
    clock.now = Clock(day).now
    if admitted:
        assert app.authenticate(issued.token).id == issued.id
    else:
        with pytest.raises(AuthenticationError, match="expired after 2026-12-10"):
            app.authenticate(issued.token)
        wrong = issued.token[:-4] + ("aaaa" if not issued.token.endswith("aaaa") else "bbbb")
        with pytest.raises(AuthenticationError, match="unknown or revoked"):  # an expiry is told to its holder only
            app.authenticate(wrong)


@pytest.mark.parametrize("last_day, accepted", [(date(2026, 11, 30), False), (date(2026, 12, 1), False),
                                                (date(2026, 12, 2), True)])
def test_a_token_is_issued_to_expire_on_a_later_day_than_its_issue(last_day, accepted):
    app = make_app("memory://", clock=Clock(date(2026, 12, 1)))
    if accepted:
        assert isinstance(app._get_or_none(app.issue_token(ADMIN, name="x", role="tre", expires_on=last_day).id),
                          AccessToken)
    else:
        with pytest.raises(InvalidActError) as refusal:
            app.issue_token(ADMIN, name="x", role="tre", expires_on=last_day)
        assert refusal.value.field == "expires_on"


def test_the_command_line_issues_a_token_with_its_last_day_and_lists_it(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("TRAMITA_DATABASE_URL", f"sqlite:///{tmp_path / 'store.sqlite'}")
    monkeypatch.delenv("TRAMITA_SIGNING_KEY", raising=False)
    assert main(["migrate"]) == 0
    assert main(["token", "create", "--role", "auditor", "--name", "TCE-AC", "--expires", "2199-12-31"]) == 0
    assert "válido até 31/12/2199" in capsys.readouterr().out
    assert main(["token", "list"]) == 0
    assert "ativo até 31/12/2199" in capsys.readouterr().out
    assert main(["token", "create", "--role", "auditor", "--name", "TCE-AC", "--expires", "31/12/2199"]) == 2
    assert "--expires: '31/12/2199' não é um dia" in capsys.readouterr().err


def test_a_receipt_stored_before_version_2_has_no_first_version_and_its_retry_answers_the_act_s_last_event(
        memory_app):
    """`Receipt.Issued` version 2 added `decided_from` (the first case version an act recorded); an older receipt
    reads None, noted as added by the upcast (so its hash is taken as recorded), and a retry answered from it
    shows the act's last event, the one an old receipt knows."""
    from domain.access import Receipt
    from domain.application import Acted
    from domain.demo import FEIJO, MESA, voters_creation

    state = {"scope": "t", "key": "k", "fingerprint": "f", "act": "requisition-received", "case_id": "c",
             "case_number": "LC35-2026-0001", "case_version": 4, "result": None}
    Receipt.Issued.upcast_v1_v2(state)
    assert state["decided_from"] is None and state[chain.UPCAST_MARK] == ["decided_from"]
    number = voters_creation(memory_app, date(2026, 3, 2), FEIJO, "Vila Tarumã", area_km2="1900", voters=40,
                             first_title=1000, zone="5")
    requisition = memory_app.issue_requisition(number, MESA, date(2026, 3, 5), body="ibge", items=["art-4"])
    received = memory_app.receive_requisition(number, MESA, date(2026, 3, 9), requisition=requisition.result)
    old = Acted(received.case_id, number, received.version, decided_from=None, replayed=True)
    assert [e["sequence"] for e in memory_app.act_events(old)] == [received.version]
    retried = Acted(received.case_id, number, received.version, decided_from=received.decided_from, replayed=True)
    assert [e["type"] for e in memory_app.act_events(retried)] == ["Case.RequisitionReceived", "Case.DeadlineOpened"]
