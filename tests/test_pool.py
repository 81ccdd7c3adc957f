"""The aggregate pool: acts borrow aggregates alone and uncopied, and a failed act never leaves a half-applied one."""

from __future__ import annotations

import threading
import uuid
from datetime import date

import pytest
from eventsourcing.persistence import IntegrityError

from domain.application.pool import AggregatePool
from domain.demo import GOVERNOR, municipal, seed_demo
from domain.errors import LegalRuleError
from domain.registry import Municipality
from tests.stores import make_app

XAPURI, BUJARI = "1200708", "1200138"
OPENED, DECREED = date(2026, 3, 2), date(2026, 3, 5)
COUNCIL = municipal("council", BUJARI)
DECREE = {"municipality": BUJARI, "decree": "DL 1/2026", "seats": 9, "yes_votes": 5}


def open_incorporation(app) -> str:
    return app.open_case(GOVERNOR, OPENED, kind="incorporation", municipalities=[BUJARI], receiving=XAPURI).number


def borrowed_case(app, number: str):
    with app.pool.borrowing():
        return app.get_case(number)


def test_consecutive_acts_on_a_case_work_on_the_same_pooled_case_not_on_copies(memory_app):
    number = open_incorporation(memory_app)
    first = borrowed_case(memory_app, number)
    memory_app.record_council_decree(number, COUNCIL, DECREED, **DECREE)
    again = borrowed_case(memory_app, number)
    assert again is first and again.version == 2


def test_a_case_read_outside_an_act_is_the_reader_s_own_copy(memory_app):
    number = open_incorporation(memory_app)
    copy = memory_app.get_case(number)
    copy.frozen.append("tampered")
    assert borrowed_case(memory_app, number).frozen == [BUJARI, XAPURI]


def test_a_question_about_a_case_is_asked_of_the_pooled_case_itself_and_answered_as_it_stands(memory_app):
    number = open_incorporation(memory_app)
    pooled = borrowed_case(memory_app, number)
    assert memory_app.ask_case(number, lambda case: case) is pooled  # not a copy
    assert memory_app.ask_case(number, lambda case: (case.version, list(case.frozen))) == (1, [BUJARI, XAPURI])
    memory_app.record_council_decree(number, COUNCIL, DECREED, **DECREE)
    assert memory_app.ask_case(number, lambda case: (case.version, sorted(case.councils))) == (2, [BUJARI])


def test_a_question_that_fails_leaves_the_case_to_be_read_again_from_the_store(memory_app):
    number = open_incorporation(memory_app)
    pooled = borrowed_case(memory_app, number)

    def failing(case):
        case.frozen.append("changed by a question, against its contract")
        raise KeyError("no answer")

    with pytest.raises(KeyError):
        memory_app.ask_case(number, failing)
    again = borrowed_case(memory_app, number)
    assert again is not pooled and again.frozen == [BUJARI, XAPURI]
    assert memory_app.record_council_decree(number, COUNCIL, DECREED, **DECREE).version == 2


def test_a_question_about_an_unknown_case_is_refused_as_a_read_of_it_is(memory_app):
    from domain.errors import CaseNotFoundError

    with pytest.raises(CaseNotFoundError):
        memory_app.ask_case("AC-1999-0001", lambda case: case.version)


def test_an_act_refused_after_its_command_changed_the_case_leaves_the_case_as_stored(memory_app):
    number = open_incorporation(memory_app)

    def change_then_refuse(case, ctx):
        case.record_council_decree(ctx, **DECREE)  # applied to the borrowed case, then refused
        raise LegalRuleError("art-29", "refused after the change")

    with pytest.raises(LegalRuleError):
        memory_app._act(number, COUNCIL, DECREED, None, change_then_refuse)
    case = borrowed_case(memory_app, number)
    assert case.version == 1 and case.councils == {} and not case.pending_events
    assert memory_app.record_council_decree(number, COUNCIL, DECREED, **DECREE).version == 2


def test_an_act_whose_save_conflicts_is_judged_again_on_the_case_as_stored(memory_app, monkeypatch):
    number = open_incorporation(memory_app)
    save, conflicts = memory_app.save, []

    def conflicting_once(*aggregates, **kwargs):
        if not conflicts:
            conflicts.append(aggregates[0].version)  # the borrowed case, changed by the first attempt
            raise IntegrityError("simulated")
        return save(*aggregates, **kwargs)

    monkeypatch.setattr(memory_app, "save", conflicting_once)
    monkeypatch.setattr(memory_app, "retry_pause", lambda seconds: None)
    acted = memory_app.record_council_decree(number, COUNCIL, DECREED, **DECREE)
    monkeypatch.undo()
    assert conflicts == [2] and acted.version == 2
    stored = memory_app.get_case(number, version=2)
    assert list(stored.councils) == [BUJARI] and memory_app.get_case(number).version == 2


def test_an_aggregate_lent_to_one_act_is_not_lent_to_another_at_the_same_time(memory_app):
    number = open_incorporation(memory_app)
    lent, release, seen = threading.Event(), threading.Event(), {}

    def first_act():
        with memory_app.pool.borrowing():
            seen["first"] = memory_app.get_case(number)
            lent.set()
            release.wait()

    thread = threading.Thread(target=first_act)
    thread.start()
    lent.wait()
    seen["second"] = borrowed_case(memory_app, number)
    release.set()
    thread.join()
    assert seen["second"] is not seen["first"] and seen["second"].version == seen["first"].version == 1


def test_a_municipality_changed_by_another_process_is_brought_up_to_date_when_borrowed(tmp_path):
    url = f"sqlite:///{tmp_path / 'shared.sqlite'}"
    one, other = make_app(url), make_app(url, seed=False)
    assert borrowed_case(one, open_incorporation(one)).version == 1
    with one.pool.borrowing():
        before = one.municipality(BUJARI).version
    other.record_figure(BUJARI, municipal("ibge", BUJARI), OPENED, figure="population", value=9000,
                        as_of=OPENED, source="IBGE 2026")
    with one.pool.borrowing():
        after = one.municipality(BUJARI)
    assert after.version == before + 1 and after.figure_on("population", OPENED).value == 9000


def test_the_pool_keeps_within_its_byte_budget_and_lets_the_least_recently_returned_go_first(memory_app):
    pool = AggregatePool(memory_app.recorder, memory_app.mapper, budget=1)
    one = Municipality.id_for(XAPURI)
    for code in (XAPURI, BUJARI, "1200401"):
        with pool.borrowing():
            pool.get(Municipality.id_for(code))
    assert pool.size == 0  # each seeded municipality is larger than one byte: none is kept
    roomy = AggregatePool(memory_app.recorder, memory_app.mapper, budget=10**9)
    for code in (XAPURI, BUJARI):
        with roomy.borrowing():
            roomy.get(Municipality.id_for(code))
    both = roomy.size
    roomy.budget = both - 1
    with roomy.borrowing():
        roomy.get(Municipality.id_for("1200401"))
    assert roomy.size <= roomy.budget and one not in roomy._idle  # Xapuri, returned first, went first


def test_an_aggregate_changed_but_not_saved_never_returns_to_the_pool(memory_app):
    number = open_incorporation(memory_app)
    with memory_app.pool.borrowing():
        case = memory_app.get_case(number)
        case.record_council_decree(memory_app.context(COUNCIL, DECREED), **DECREE)  # never saved
    assert borrowed_case(memory_app, number).version == 1


def test_the_pool_budget_is_read_from_the_environment_and_a_malformed_one_is_refused_naming_it(monkeypatch):
    monkeypatch.setenv("TRAMITA_AGGREGATE_POOL_BYTES", "4096")
    assert make_app("memory://", seed=False).pool.budget == 4096
    monkeypatch.setenv("TRAMITA_AGGREGATE_POOL_BYTES", "64MB")
    with pytest.raises(ValueError, match="TRAMITA_AGGREGATE_POOL_BYTES='64MB'"):
        make_app("memory://", seed=False)


def test_the_memory_store_reads_an_aggregate_s_later_events_by_version_as_the_databases_do(memory_app):
    """The in-process recorder finds the events after a version, or all of them, by looking them up
    (tramita/memory.py), and answers exactly what the library's walk over every version answers."""
    from eventsourcing.popo import POPOApplicationRecorder

    number = open_incorporation(memory_app)
    memory_app.record_council_decree(number, COUNCIL, DECREED, **DECREE)
    case_id = memory_app.resolve_case(number)
    recorder = memory_app.recorder
    assert type(recorder).__name__ == "IndexedMemoryRecorder"
    for gt in (None, 0, 1, 2, 5):
        assert recorder.select_events(case_id, gt=gt) == POPOApplicationRecorder.select_events(recorder, case_id, gt=gt)
    assert recorder.select_events(uuid.uuid4(), gt=0) == recorder.select_events(uuid.uuid4()) == []


def test_the_application_saves_as_the_library_does_collecting_its_aggregates_by_their_class(memory_app):
    """`Tramita.save` does the library's save through the event store's `put`, without its protocol checks: the
    same events recorded, the same recordings answered, the aggregate held at its new version; and the library's
    save is still the steps it restates (should they change, base.py's save must be checked again)."""
    import inspect

    from eventsourcing.application import Application

    steps = [line.strip() for line in inspect.getsource(Application.save).splitlines()
             if line.strip().startswith(("processing_event", "recordings", "self.", "return"))]
    assert steps == ["processing_event: ProcessingEvent[TAggregateID] = ProcessingEvent()",
                     "processing_event.collect_events(*objs, **kwargs)",
                     "recordings = self._record(processing_event)",
                     "self._take_snapshots(processing_event)", "self._notify(recordings)",
                     "self.notify(processing_event.events)  # Deprecated.", "return recordings"], (
        "the library's save changed: check Tramita.save (domain/application/base.py) still does what it does")
    number = open_incorporation(memory_app)
    case = memory_app.get_case(number)
    before = memory_app.recorder.max_notification_id()
    with memory_app.pool.borrowing():
        case = memory_app.get_case(number)
        case.record_council_decree(memory_app.context(COUNCIL, DECREED), **DECREE)
        pending = list(case.pending_events)
        recordings = memory_app.save(case, None)
    assert [r.domain_event for r in recordings] == pending and not case.pending_events
    assert memory_app.recorder.max_notification_id() == before + len(pending)
    assert memory_app.repository.get(case.id).version == case.version == 2


def _containers(value, found: dict[int, object]) -> dict[int, object]:
    """Every dict and list reachable in `value`, by id."""
    if isinstance(value, (dict, list)) and id(value) not in found:
        found[id(value)] = value
        for item in (value.values() if isinstance(value, dict) else value):
            _containers(item, found)
    return found


def test_a_private_copy_of_every_demo_aggregate_holds_what_it_holds_and_shares_nothing_that_changes(memory_app):
    """A read outside an act gets a copy made by walking the aggregate's containers (`copied_state`): what it
    holds pickles to the very bytes of the pooled aggregate, no dict or list of it is the pooled one's, and a
    part the aggregate holds twice is held twice by the copy too, as `copy.deepcopy` and pickle keep it."""
    import pickle
    from copy import deepcopy

    seed_demo(memory_app, say=lambda line: None)
    ids = {notification.originator_id for notification in memory_app.recorder.select_notifications(1, 10**6)}
    assert len(ids) > 20
    for aggregate_id in ids:
        with memory_app.pool.borrowing():
            pooled = memory_app.pool.get(aggregate_id)
            copy = deepcopy(pooled)
            assert type(copy) is type(pooled) and copy is not pooled
            assert pickle.dumps(copy, protocol=5) == pickle.dumps(pooled, protocol=5)
            assert not set(_containers(vars(copy), {})) & set(_containers(vars(pooled), {}))
    case = borrowed_case(memory_app, open_incorporation(memory_app))
    shared = case.__dict__["shared_for_this_test"] = {"frozen": case.frozen}
    copy = deepcopy(case)
    assert copy.shared_for_this_test["frozen"] is copy.frozen is not case.frozen and shared["frozen"] is case.frozen
