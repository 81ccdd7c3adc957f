"""An SQLite save, taken in its turn (infrastructure/sqlite.py), is one transaction: its events are stored all together
and committed when the save returns, with their notification ids, or not at all."""

from __future__ import annotations

import sqlite3
from uuid import uuid4

import pytest
from eventsourcing.persistence import IntegrityError, StoredEvent

from tramita.bootstrap import build_application


@pytest.fixture
def recorder(tmp_path):
    app = build_application(f"sqlite:///{tmp_path / 'tramita.sqlite'}", create_table=True)
    yield app.recorder, tmp_path / "tramita.sqlite"
    app.close()


def events(originator, versions, state=b'{"x":1}'):
    return [StoredEvent(originator_id=originator, originator_version=v, topic="tests:Event", state=state)
            for v in versions]


def stored_rows(path):
    with sqlite3.connect(path) as other:  # another connection: sees only what is committed
        return other.execute("SELECT rowid, originator_id, originator_version FROM stored_events "
                             "ORDER BY rowid").fetchall()


def test_a_saves_events_are_committed_when_the_save_returns_with_their_notification_ids(recorder):
    rec, path = recorder
    first, second = uuid4(), uuid4()
    ids = rec.insert_events(events(first, [1, 2]) + events(second, [1]) + events(first, [3]))
    rows = {(row[1], row[2]): row[0] for row in stored_rows(path)}
    assert ids == [rows[(first.hex, 1)], rows[(first.hex, 2)], rows[(second.hex, 1)], rows[(first.hex, 3)]]
    assert ids == sorted(ids) and len(set(ids)) == 4
    assert [n.id for n in rec.select_notifications(ids[0], 10)] == ids


def test_a_save_meeting_a_version_already_stored_stores_none_of_its_events(recorder):
    rec, path = recorder
    case, other = uuid4(), uuid4()
    rec.insert_events(events(case, [1, 2]))
    before = stored_rows(path)
    with pytest.raises(IntegrityError):  # its third event repeats version 2: the first two are not kept either
        rec.insert_events(events(other, [1]) + events(case, [3]) + events(case, [2]))
    assert stored_rows(path) == before
    assert rec.select_events(other) == [] and [e.originator_version for e in rec.select_events(case)] == [1, 2]


def test_a_save_repeating_a_version_within_itself_stores_nothing(recorder):
    rec, path = recorder
    case = uuid4()
    with pytest.raises(IntegrityError):
        rec.insert_events(events(case, [1, 1]))
    assert stored_rows(path) == []


def test_a_large_save_is_stored_whole_or_not_at_all(recorder):
    rec, path = recorder
    case = uuid4()
    ids = rec.insert_events(events(case, range(1, 1201)))
    assert [row[0] for row in stored_rows(path)] == ids and len(ids) == 1200
    with pytest.raises(IntegrityError):
        rec.insert_events(events(uuid4(), range(1, 1201)) + events(case, [1200]))
    assert len(stored_rows(path)) == 1200


def test_the_events_read_back_are_those_saved(recorder):
    rec, _ = recorder
    case = uuid4()
    saved = events(case, [1, 2], state='{"name":"Acrelândia","nul":"\\u0000"}'.encode())
    rec.insert_events(saved)
    assert [(e.originator_id, e.originator_version, e.topic, e.state) for e in rec.select_events(case)] == \
        [(e.originator_id, e.originator_version, e.topic, e.state) for e in saved]
