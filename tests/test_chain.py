"""The hash chain: an auditor recomputes it and is told the first event that was altered."""

from __future__ import annotations

import hashlib
import json
import sqlite3
from api.cli import main
from domain import chain
from domain.demo import creation_1992
from tests.conftest import make_app


def test_every_event_carries_the_hash_of_its_canonical_encoding_chained_to_the_previous_event(memory_app):
    number = creation_1992(memory_app, lambda line: None)
    events = memory_app.events_of(number)
    assert events[0].prev_hash == chain.GENESIS
    for previous, event in zip(events, events[1:]):
        assert event.prev_hash == previous.hash
    # The documented recipe, written out by hand for one event.
    first = events[0]
    fields = {k: v for k, v in vars(first).items() if k not in ("hash", "originator_topic")}
    document = {k: chain.canonical_value(v) for k, v in fields.items()} | {"type": "Case.PetitionFiled"}
    encoded = json.dumps(document, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()
    assert hashlib.sha256(encoded).hexdigest() == first.hash


def test_an_intact_store_verifies_every_chain(memory_app):
    creation_1992(memory_app, lambda line: None)
    reports = memory_app.verify_all()
    assert reports and all(report.ok for report in reports)


def test_altering_one_stored_byte_in_the_sqlite_file_is_named_with_its_case_and_event(tmp_path, capsys, monkeypatch):
    path = tmp_path / "tramita.sqlite"
    number = creation_1992(make_app(f"sqlite:///{path}"), lambda line: None)
    with sqlite3.connect(path) as db:
        rowid, state = db.execute("SELECT rowid, state FROM stored_events WHERE topic LIKE "
                                  "'%Case.PlebisciteResultHomologated'").fetchone()
        assert b'"yes":600' in state
        db.execute("UPDATE stored_events SET state = ? WHERE rowid = ?", (state.replace(b'"yes":600', b'"yes":900'),
                                                                         rowid))
    report = make_app(f"sqlite:///{path}").verify(number)
    assert not report.ok
    assert report.label == number
    assert report.first_bad_version == 12
    assert report.first_bad_type == "Case.PlebisciteResultHomologated"
    assert "content altered" in report.reason

    monkeypatch.setenv("TRAMITA_DATABASE_URL", f"sqlite:///{path}")
    assert main(["verify"]) == 1
    out = capsys.readouterr().out
    assert f"{number}: 12 events, ALTERED at event 12 (Case.PlebisciteResultHomologated)" in out
    assert "1 altered" in out


def test_a_stored_event_that_no_longer_decodes_is_named_too(tmp_path):
    path = tmp_path / "tramita.sqlite"
    number = creation_1992(make_app(f"sqlite:///{path}"), lambda line: None)
    with sqlite3.connect(path) as db:
        rowid, state = db.execute("SELECT rowid, state FROM stored_events WHERE topic LIKE "
                                  "'%Case.RequirementsVerified'").fetchone()
        db.execute("UPDATE stored_events SET state = ? WHERE rowid = ?", (state[:-5], rowid))
    report = make_app(f"sqlite:///{path}").verify(number)
    assert (report.ok, report.first_bad_version) == (False, 9)
    assert "does not decode" in report.reason


def test_a_removed_event_breaks_the_chain_at_the_next_one(tmp_path):
    path = tmp_path / "tramita.sqlite"
    number = creation_1992(make_app(f"sqlite:///{path}"), lambda line: None)
    app = make_app(f"sqlite:///{path}")
    case_id = app.resolve_case(number).hex  # the SQLite recorder stores ids as hex
    with sqlite3.connect(path) as db:
        # Re-number the tail so that the gap is invisible to version counting: only the chain sees it.
        db.execute("DELETE FROM stored_events WHERE originator_id = ? AND originator_version = 20", (case_id,))
        db.execute("UPDATE stored_events SET originator_version = originator_version - 1 "
                   "WHERE originator_id = ? AND originator_version > 20", (case_id,))
    report = make_app(f"sqlite:///{path}").verify(number)
    assert (report.ok, report.first_bad_version) == (False, 20)
    assert "prev_hash" in report.reason
