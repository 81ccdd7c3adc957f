"""The hash chain: an auditor recomputes it and is told the first event that was altered."""

from __future__ import annotations

import hashlib
import json
import sqlite3
from uuid import UUID

from tramita.cli import main
from domain import chain
from infrastructure.persistence import persistence_env
from domain.demo import creation_1992
from tests.conftest import make_app


class StoredEvents:
    """The library's events table, tampered with behind the application's back.

    SQLite: table `stored_events`, ids stored as hex text. PostgreSQL: table `public.tramita_events` (named after
    the application), `originator_id uuid`, `state bytea`. Queries are written with `?` placeholders.
    """

    def __init__(self, database_url: str) -> None:
        env = persistence_env(database_url)
        if "SQLITE_DBNAME" in env:
            self.db, self.table, self.placeholder = sqlite3.connect(env["SQLITE_DBNAME"]), "stored_events", "?"
            self.id_of = lambda originator_id: originator_id.hex
        else:
            import psycopg

            self.db = psycopg.connect(dbname=env["POSTGRES_DBNAME"], host=env["POSTGRES_HOST"],
                                      port=env["POSTGRES_PORT"], user=env["POSTGRES_USER"],
                                      password=env["POSTGRES_PASSWORD"])
            self.table, self.placeholder = f"{env['POSTGRES_SCHEMA']}.tramita_events", "%s"
            self.id_of = lambda originator_id: originator_id

    def execute(self, sql: str, *params: object) -> list[tuple]:
        cursor = self.db.execute(sql.replace("?", self.placeholder).format(table=self.table), params)
        return cursor.fetchall() if cursor.description else []

    def event_of_type(self, event_type: str) -> tuple[object, int, bytes]:
        """(originator_id as stored, version, state) of the one event whose topic ends with `event_type`."""
        [(originator_id, version, state)] = self.execute(
            "SELECT originator_id, originator_version, state FROM {table} WHERE topic LIKE ?", f"%{event_type}")
        return originator_id, version, bytes(state)

    def set_state(self, originator_id: object, version: int, state: bytes) -> None:
        self.execute("UPDATE {table} SET state = ? WHERE originator_id = ? AND originator_version = ?",
                     state, originator_id, version)

    def remove_and_close_the_gap(self, case_id: UUID, version: int) -> None:
        """Delete one event and re-number the tail, so that only the chain sees the gap (in two steps, so that
        no re-numbered row meets its neighbour's key half-way)."""
        originator_id = self.id_of(case_id)
        self.execute("DELETE FROM {table} WHERE originator_id = ? AND originator_version = ?", originator_id, version)
        self.execute("UPDATE {table} SET originator_version = -(originator_version - 1) "
                     "WHERE originator_id = ? AND originator_version > ?", originator_id, version)
        self.execute("UPDATE {table} SET originator_version = -originator_version "
                     "WHERE originator_id = ? AND originator_version < 0", originator_id)

    def __enter__(self) -> StoredEvents:
        return self

    def __exit__(self, *exc_info: object) -> None:
        if exc_info[0] is None:
            self.db.commit()
        self.db.close()


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


def test_altering_one_stored_byte_is_named_with_its_case_and_event(database_url, capsys, monkeypatch):
    number = creation_1992(make_app(database_url), lambda line: None)
    with StoredEvents(database_url) as stored:
        originator_id, version, state = stored.event_of_type("Case.PlebisciteResultHomologated")
        assert b'"yes":600' in state
        stored.set_state(originator_id, version, state.replace(b'"yes":600', b'"yes":900'))
    report = make_app(database_url).verify(number)
    assert not report.ok
    assert report.label == number
    assert report.first_bad_version == 12
    assert report.first_bad_type == "Case.PlebisciteResultHomologated"
    assert "content altered" in report.reason

    monkeypatch.setenv("TRAMITA_DATABASE_URL", database_url)
    assert main(["verify"]) == 1
    out = capsys.readouterr().out
    assert f"{number}: 12 events, ALTERED at event 12 (Case.PlebisciteResultHomologated)" in out
    assert "1 altered" in out


def test_a_stored_event_that_no_longer_decodes_is_named_too(database_url):
    number = creation_1992(make_app(database_url), lambda line: None)
    with StoredEvents(database_url) as stored:
        originator_id, version, state = stored.event_of_type("Case.RequirementsVerified")
        stored.set_state(originator_id, version, state[:-5])
    report = make_app(database_url).verify(number)
    assert (report.ok, report.first_bad_version) == (False, 9)
    assert "does not decode" in report.reason


def test_a_removed_event_breaks_the_chain_at_the_next_one(database_url):
    app = make_app(database_url)
    number = creation_1992(app, lambda line: None)
    with StoredEvents(database_url) as stored:
        stored.remove_and_close_the_gap(app.resolve_case(number), 20)
    report = make_app(database_url).verify(number)
    assert (report.ok, report.first_bad_version) == (False, 20)
    assert "prev_hash" in report.reason


def test_an_event_is_recorded_with_the_fields_and_bytes_its_class_would_give_it(memory_app):
    """Acts make their events without the frozen dataclass's `__init__` (domain/acts.py `_new_event`): every
    event of the demo is equal to the one its class builds from the same fields, its fields in the class's order
    (so the stored bytes are the same), and a missing field, an unknown one or an id that is not a UUID is still
    refused by the class itself."""
    import dataclasses

    import pytest

    from domain.acts import _new_event

    creation_1992(memory_app, say=lambda line: None)
    events = [memory_app.mapper.to_domain_event(record)
              for record in memory_app.recorder.select_notifications(1, 10**6)]
    assert len({type(event) for event in events}) > 20
    for event in events:
        fields = {field.name: getattr(event, field.name) for field in dataclasses.fields(event)}
        made, built = _new_event(type(event), **fields), type(event)(**fields)
        assert type(made) is type(built) and list(vars(made).items()) == list(vars(built).items())
        assert memory_app.mapper.to_stored_event(made) == memory_app.mapper.to_stored_event(built)
    fields = {field.name: getattr(events[-1], field.name) for field in dataclasses.fields(events[-1])}
    event_class = type(events[-1])
    with pytest.raises(TypeError):
        _new_event(event_class, **{name: value for name, value in fields.items() if name != "hash"})
    with pytest.raises(TypeError):
        _new_event(event_class, **fields, unknown="x")
    with pytest.raises(TypeError):
        _new_event(event_class, **{**fields, "originator_id": str(fields["originator_id"])})
