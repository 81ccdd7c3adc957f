"""An SQLite store reads an aggregate's events on a connection of the reading thread's own (infrastructure/sqlite.py):
each read sees what was committed before it, by any connection, and the connections go with their threads and
with the store."""

from __future__ import annotations

import gc
import os
import sqlite3
import threading
from uuid import uuid4

import pytest
from eventsourcing.persistence import InterfaceError, StoredEvent

from tramita.bootstrap import build_application


@pytest.fixture
def store(tmp_path):
    path = tmp_path / "tramita.sqlite"
    app = build_application(f"sqlite:///{path}", create_table=True)
    yield app, path
    app.close()


def saved(recorder, originator, *versions):
    recorder.insert_events([StoredEvent(originator_id=originator, originator_version=v, topic="tests:Event",
                                        state=b'{"v":%d}' % v) for v in versions])


def in_thread(function):
    """`function()` run on a new thread, which then ends; what it returned."""
    result = []
    thread = threading.Thread(target=lambda: result.append(function()))
    thread.start()
    thread.join()
    return result[0]


def test_a_read_sees_every_event_committed_before_it_by_this_process_or_another(store):
    app, path = store
    originator = uuid4()
    saved(app.recorder, originator, 1, 2)
    assert [e.originator_version for e in app.recorder.select_events(originator)] == [1, 2]
    with sqlite3.connect(path) as other:  # another process's commit, as a database administrator would make it
        other.execute("INSERT INTO stored_events VALUES (?, 3, 'tests:Event', x'7b7d')", (originator.hex,))
    assert [e.originator_version for e in app.recorder.select_events(originator, gt=1)] == [2, 3]
    saved(app.recorder, originator, 4)
    assert [(e.originator_version, e.state) for e in app.recorder.select_events(originator, gt=2)] == \
        [(3, b"{}"), (4, b'{"v":4}')]


def test_each_thread_reads_on_its_own_connection_and_keeps_it_for_its_next_reads(store):
    app, _ = store
    readers = app.recorder.datastore.readers
    mine = readers.connection()
    assert readers.connection() is mine
    theirs = in_thread(readers.connection)
    assert theirs is not mine


def test_a_thread_s_connection_is_closed_when_the_thread_ends(store):
    app, _ = store
    readers, originator = app.recorder.datastore.readers, uuid4()
    saved(app.recorder, originator, 1)
    assert in_thread(lambda: len(app.recorder.select_events(originator))) == 1
    gc.collect()
    assert len(readers._open) == 0


def test_closing_the_store_closes_every_read_connection_and_a_later_read_is_refused(tmp_path):
    app = build_application(f"sqlite:///{tmp_path / 'tramita.sqlite'}", create_table=True)
    originator = uuid4()
    saved(app.recorder, originator, 1)
    connection = app.recorder.datastore.readers.connection()
    app.close()
    with pytest.raises(sqlite3.ProgrammingError):
        connection.execute("SELECT 1")
    with pytest.raises(InterfaceError):  # on the thread that read before, as on any other
        app.recorder.select_events(originator)
    in_thread_error = in_thread(lambda: _raised(lambda: app.recorder.select_events(originator)))
    assert isinstance(in_thread_error, InterfaceError)


def _raised(function):
    try:
        function()
    except Exception as error:  # noqa: BLE001 - the test looks at what was raised
        return error
    return None


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork")
def test_a_forked_process_reads_on_a_connection_of_its_own_and_leaves_the_parent_s_alone(store):
    app, _ = store
    originator = uuid4()
    saved(app.recorder, originator, 1)
    parents = app.recorder.datastore.readers.connection()
    pid = os.fork()
    if pid == 0:  # the child: exit status 0 only if it read on a new connection
        ok = False
        try:
            ok = app.recorder.datastore.readers.connection() is not parents and \
                len(app.recorder.select_events(originator)) == 1
        finally:
            os._exit(0 if ok else 1)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0
    assert app.recorder.datastore.readers.connection() is parents
    assert [e.originator_version for e in app.recorder.select_events(originator)] == [1]


def compiled(connection):
    """The statements `connection` holds compiled (SQLite's `sqlite_stmt` table, without the query of it)."""
    try:
        rows = connection.execute("SELECT sql FROM sqlite_stmt").fetchall()
    except sqlite3.OperationalError:
        pytest.skip("this SQLite is built without the sqlite_stmt table")
    return {row[0] for row in rows} - {"SELECT sql FROM sqlite_stmt"}


def test_a_thread_s_connection_keeps_an_act_s_reads_compiled_where_the_library_s_way_keeps_only_the_last(store):
    app, path = store
    recorder, case, statute = app.recorder, uuid4(), uuid4()
    saved(recorder, case, 1, 2)
    recorder.select_events(case)  # a first read of the case
    recorder.select_events(case, gt=1)  # the pool's catch-up of the case, then the statute's
    recorder.select_events(statute, gt=0)
    kept = compiled(recorder.datastore.readers.connection())
    every, after = recorder.select_events_statement, recorder.select_events_statement + "AND originator_version>? "
    assert {every + "ORDER BY originator_version ASC ", after + "ORDER BY originator_version ASC "} <= kept
    # A connection opened as the library opens its pool's, `cached_statements=True`, keeps one (docs/upstream.md).
    library_like = sqlite3.connect(path, isolation_level=None, cached_statements=True)
    library_like.execute("BEGIN")
    library_like.execute("SELECT count(*) FROM stored_events").fetchall()
    library_like.execute("ROLLBACK")
    assert len(compiled(library_like)) <= 1
    library_like.close()
