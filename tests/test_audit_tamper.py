"""An attacker with write access to the database, following the published hash recipe, cannot rewrite the record
unseen: each tampering the chains alone missed is found by `tramita verify`, which names the case, the event and
the kind; with a checkpoint the auditor kept outside, also after the stored checkpoints are deleted or rewritten.

Each test records the 1991-1993 creation (a concluded case), a token issued and revoked, a checkpoint signed by the
scheduler's code path (`tramita checkpoint`), and then tampers with the stored rows directly, on SQLite and on
PostgreSQL.
"""

from __future__ import annotations

import json
import sqlite3
import sys
from dataclasses import dataclass
from pathlib import Path
from uuid import UUID

import pytest

from tramita.cli import main
from audit import merkle
from audit.keys import load_signing_key
from audit.notes import Signer, entry_of
from domain import chain
from domain.acts import Actor
from domain.demo import creation_1992
from eventsourcing.persistence import StoredEvent
from tests.conftest import make_app
from tests.test_chain import StoredEvents

ORIGIN = "tramita.test/acre"


@dataclass
class Signed:
    """A signed store with one concluded case, a revoked token, and a checkpoint kept outside the store."""

    url: str
    number: str
    case_id: UUID
    token_id: UUID
    kept: Path
    tmp: Path

    def verify(self, capsys, *args: str) -> tuple[int, str]:
        capsys.readouterr()
        code = main(["verify", *args])
        captured = capsys.readouterr()
        return code, captured.out + captured.err

    def app(self):  # noqa: ANN201
        return make_app(self.url, seed=False)


@pytest.fixture
def signed(database_url, tmp_path, monkeypatch, capsys) -> Signed:
    return _signed(database_url, tmp_path, monkeypatch, capsys)


@pytest.fixture
def signed_sqlite(tmp_path, monkeypatch, capsys) -> Signed:
    """`signed` on SQLite only, whose columns take a value of any type."""
    return _signed(f"sqlite:///{tmp_path / 'tramita.sqlite'}", tmp_path, monkeypatch, capsys)


def _signed(database_url: str, tmp_path: Path, monkeypatch, capsys) -> Signed:  # noqa: ANN001
    """A store with the demo's 1992 creation, a token issued and revoked, projected and checkpointed."""
    key = tmp_path / "keys" / "signing.key"
    for variable in ("TRAMITA_VERIFIER_KEY", "TRAMITA_WITNESS_DIR", "TRAMITA_WITNESS_URL"):
        monkeypatch.delenv(variable, raising=False)
    monkeypatch.setenv("TRAMITA_DATABASE_URL", database_url)
    monkeypatch.setenv("TRAMITA_SIGNING_KEY", str(key))
    monkeypatch.setenv("TRAMITA_LOG_ORIGIN", ORIGIN)
    assert main(["keys", "init"]) == 0
    signer = load_signing_key(key)
    app = make_app(database_url, signer=signer)
    number = creation_1992(app, lambda line: None)
    issued = app.issue_token(Actor("admin", "token-administrator"), name="clerk of the TRE", role="tre")
    app.revoke_token(Actor("admin", "token-administrator"), str(issued.id), reason="clerk left the TRE")
    assert main(["migrate"]) == 0
    assert main(["project", "--once"]) == 0
    capsys.readouterr()
    assert main(["checkpoint"]) == 0
    kept = tmp_path / "kept.checkpoint"
    kept.write_text(capsys.readouterr().out, encoding="utf-8")
    store = Signed(database_url, number, app.resolve_case(number), issued.id, kept, tmp_path)
    code, out = store.verify(capsys)
    assert code == 0 and "VERDICT: intact" in out
    return store


def _rows_of(stored: StoredEvents, aggregate_id: UUID) -> list[tuple[int, dict]]:
    rows = stored.execute("SELECT originator_version, state FROM {table} WHERE originator_id = ? "
                          "ORDER BY originator_version", stored.id_of(aggregate_id))
    return [(int(version), json.loads(bytes(state))) for version, state in rows]


def _rehash(app, aggregate_id: UUID, version: int, topic: str, state: dict) -> str:  # noqa: ANN001
    """The hash the published recipe gives the event whose stored state is `state`."""
    event = app.mapper.to_domain_event(StoredEvent(aggregate_id, version, topic, json.dumps(state).encode()))
    return chain.hash_of(event)


def test_one_changed_byte_is_named_with_its_case_and_event(signed, capsys):
    with StoredEvents(signed.url) as stored:
        originator_id, version, state = stored.event_of_type("Case.PlebisciteResultHomologated")
        stored.set_state(originator_id, version, state.replace(b'"yes":600', b'"yes":601'))
    code, out = signed.verify(capsys)
    assert code == 1
    assert f"{signed.number}: 12 events, ALTERED at event 12 (Case.PlebisciteResultHomologated)" in out
    assert "TAMPERING FOUND" in out


def test_a_deleted_middle_event_is_named(signed, capsys):
    with StoredEvents(signed.url) as stored:
        stored.remove_and_close_the_gap(signed.case_id, 20)
    code, out = signed.verify(capsys)
    assert code == 1
    assert f"{signed.number}: 20 events, ALTERED at event 20" in out and "prev_hash" in out


def test_deleting_the_last_events_of_a_concluded_case_is_found_and_named(signed, capsys):
    app = signed.app()
    last = app.get_case(signed.number).version
    assert app.get_case(signed.number).stage == "concluded"
    with StoredEvents(signed.url) as stored:
        stored.execute("DELETE FROM {table} WHERE originator_id = ? AND originator_version > ?",
                       stored.id_of(signed.case_id), last - 3)
    assert signed.app().get_case(signed.number).stage != "concluded"  # the case silently went back
    code, out = signed.verify(capsys)
    assert code == 1
    assert f"DELETED: {signed.number}: its events {last - 2}..{last} were logged and are no longer stored" in out
    assert "the checkpoint of size" in out and "at least 3 events were deleted" in out


def test_a_whole_deleted_case_is_found_and_named(signed, capsys):
    with StoredEvents(signed.url) as stored:
        count = len(_rows_of(stored, signed.case_id))
        stored.execute("DELETE FROM {table} WHERE originator_id = ?", stored.id_of(signed.case_id))
    code, out = signed.verify(capsys)
    assert code == 1
    assert f"DELETED: {signed.number}: all of its {count} logged events were deleted from the store" in out


def test_an_event_rewritten_with_every_later_hash_recomputed_is_found(signed, capsys):
    app = signed.app()
    with StoredEvents(signed.url) as stored:
        rows = _rows_of(stored, signed.case_id)
        [(topic,)] = stored.execute("SELECT topic FROM {table} WHERE originator_id = ? AND originator_version = 12",
                                    stored.id_of(signed.case_id))
        previous = None
        for version, state in rows[11:]:
            if version == 12:
                state["populations"]["area"]["yes"] = 690  # the plebiscite's YES votes, rewritten
            if previous is not None:
                state["prev_hash"] = previous
            [(row_topic,)] = stored.execute("SELECT topic FROM {table} WHERE originator_id = ? AND "
                                            "originator_version = ?", stored.id_of(signed.case_id), version)
            state["hash"] = previous = _rehash(app, signed.case_id, version, row_topic, state)
            stored.set_state(stored.id_of(signed.case_id), version, json.dumps(state).encode())
        assert topic.endswith("PlebisciteResultHomologated")
    assert signed.app().verify(signed.number).ok  # the per-case chain alone is fooled
    code, out = signed.verify(capsys)
    assert code == 1
    assert f"REWRITTEN: {signed.number}, event 12: rewritten after it was logged" in out
    assert f"FORGED: {signed.number}, event 12: its signature does not verify" in out
    assert "no longer give the root signed by the checkpoint" in out


def append_forged_act(signed: Signed, *, copy_signature: bool) -> int:
    """Append to the case a copy of its last act, chained and hashed by the published recipe, either unsigned or
    with the last act's signature copied; its version."""
    app = signed.app()
    with StoredEvents(signed.url) as stored:
        last_version, last_state = _rows_of(stored, signed.case_id)[-1]
        [(topic,)] = stored.execute("SELECT topic FROM {table} WHERE originator_id = ? AND originator_version = ?",
                                    stored.id_of(signed.case_id), last_version)
        forged = dict(last_state, prev_hash=last_state["hash"])
        if not copy_signature:
            forged.pop("signature")
        forged["hash"] = _rehash(app, signed.case_id, last_version + 1, topic, forged)
        stored.execute("INSERT INTO {table} (originator_id, originator_version, topic, state) VALUES (?, ?, ?, ?)",
                       stored.id_of(signed.case_id), last_version + 1, topic, json.dumps(forged).encode())
    return last_version + 1


def test_a_forged_act_appended_with_a_correct_hash_is_found(signed, capsys):
    forged = append_forged_act(signed, copy_signature=False)
    assert signed.app().verify(signed.number).ok  # the chain is intact: only the signature is missing
    code, out = signed.verify(capsys)
    assert code == 1
    assert f"UNSIGNED: {signed.number}, event {forged}" in out and "forged" in out
    capsys.readouterr()
    assert main(["checkpoint"]) == 1  # the log refuses to sign over it: the tamper alarm
    assert "ALARME DE ADULTERAÇÃO" in capsys.readouterr().err
    assert main(["checkpoint"]) == 1  # refused again: the same alarm, one alert
    [alert] = [a for a in (signed.app().repository.get(n.originator_id) for n in signed.app().recorder
                           .select_notifications(1, 10_000, topics=["domain.alerts:Alert.SystemRaised"]))]
    assert alert.kind == "tamper-alarm" and "carries no signature although signing had begun" in alert.message


def test_a_forged_act_with_a_signature_copied_from_another_event_is_found(signed, capsys):
    forged = append_forged_act(signed, copy_signature=True)
    code, out = signed.verify(capsys)
    assert code == 1
    assert f"FORGED: {signed.number}, event {forged}: its signature does not verify" in out


def test_deleting_a_tokens_revocation_is_found_although_the_token_authenticates_again(signed, capsys):
    with StoredEvents(signed.url) as stored:
        stored.execute("DELETE FROM {table} WHERE originator_id = ? AND originator_version = 2",
                       stored.id_of(signed.token_id))
    assert signed.app().repository.get(signed.token_id).revoked_on is None  # revoked no more
    code, out = signed.verify(capsys)
    assert code == 1
    assert f"DELETED: AccessToken {signed.token_id}: its events 2..2 were logged and are no longer stored" in out


def test_with_a_checkpoint_kept_outside_deleting_the_stored_checkpoints_and_tree_does_not_hide_a_deletion(
        signed, capsys):
    app = signed.app()
    last = app.get_case(signed.number).version
    with StoredEvents(signed.url) as stored:
        stored.execute("DELETE FROM {table} WHERE originator_id = ? AND originator_version = ?",
                       stored.id_of(signed.case_id), last)
        for table in ("audit_checkpoints", "audit_leaves", "audit_nodes", "audit_witnessed"):
            stored.execute(f"DELETE FROM {table}")
        stored.execute("UPDATE audit_state SET size = 0, position = 0")  # a careful attacker leaves no trace
    code, out = signed.verify(capsys, "--no-read-models")
    assert code == 0  # without the kept checkpoint the audit log can no longer tell
    assert "no checkpoint verifies this store" in out
    code, out = signed.verify(capsys)  # the read models, projected before the deletion, still tell
    assert code == 1 and "no checkpoint verifies this store" in out and "cases (case_id=" in out
    code, out = signed.verify(capsys, "--checkpoint", str(signed.kept))
    assert code == 1
    assert "is missing from the store: stored checkpoints were deleted or rewritten" in out
    assert "at least 1 events were deleted" in out


def test_with_a_checkpoint_kept_outside_a_stored_checkpoint_rewritten_with_another_key_is_found(signed, capsys):
    intruder = Signer.generate(ORIGIN)
    with StoredEvents(signed.url) as stored:
        [(size, note)] = stored.execute("SELECT size, note FROM audit_checkpoints")
        text = note.split("\n\n")[0] + "\n"
        stored.execute("UPDATE audit_checkpoints SET note = ? WHERE size = ?", intruder.sign_note(text), size)
    code, out = signed.verify(capsys, "--checkpoint", str(signed.kept))
    assert code == 1
    assert "does not verify with the key" in out and "forged or altered" in out


def test_verifying_a_database_that_does_not_exist_is_an_error_and_creates_nothing(tmp_path, monkeypatch, capsys):
    missing = tmp_path / "nowhere" / "tramita.sqlite"
    monkeypatch.setenv("TRAMITA_DATABASE_URL", f"sqlite:///{missing}")
    assert main(["verify"]) == 2
    assert "there is no database at" in capsys.readouterr().err
    assert not missing.parent.exists()


def test_verifying_an_empty_store_is_an_error(database_url, monkeypatch, capsys):
    make_app(database_url, seed=False)
    monkeypatch.setenv("TRAMITA_DATABASE_URL", database_url)
    assert main(["verify"]) == 2
    assert "a base não guarda nenhum evento" in capsys.readouterr().err


def test_verifying_an_unreachable_database_is_an_error(monkeypatch, capsys):
    monkeypatch.setenv("TRAMITA_DATABASE_URL", "postgresql://tramita@127.0.0.1:1/none?connect_timeout=1")
    assert main(["verify"]) == 2
    assert "não é possível ler a base" in capsys.readouterr().err


def test_events_recorded_before_the_key_existed_are_covered_by_the_first_checkpoint_and_the_verdict_says_so(
        database_url, tmp_path, monkeypatch, capsys):
    for variable in ("TRAMITA_VERIFIER_KEY", "TRAMITA_WITNESS_DIR", "TRAMITA_WITNESS_URL", "TRAMITA_SIGNING_KEY"):
        monkeypatch.delenv(variable, raising=False)
    monkeypatch.setenv("TRAMITA_DATABASE_URL", database_url)
    legacy = make_app(database_url)  # no key yet: an earlier deployment
    creation_1992(legacy, lambda line: None)
    unsigned = legacy.recorder.max_notification_id()
    monkeypatch.setenv("TRAMITA_SIGNING_KEY", str(tmp_path / "signing.key"))
    monkeypatch.setenv("TRAMITA_LOG_ORIGIN", ORIGIN)
    assert main(["keys", "init"]) == 0 and main(["migrate"]) == 0 and main(["checkpoint"]) == 0
    signed = make_app(database_url, seed=False, signer=load_signing_key(tmp_path / "signing.key"))
    signed.issue_token(Actor("admin", "token-administrator"), name="clerk", role="tre")
    capsys.readouterr()
    assert main(["verify"]) == 0
    out = capsys.readouterr().out
    assert f"{unsigned} events carry no signature (recorded before the signing key existed): the checkpoints " \
           "cover them instead" in out
    assert "not yet covered by a checkpoint: 1 events" in out and "VERDICT: intact" in out


@pytest.mark.parametrize("command", [["replay", "LC35-1991-0001"], ["token", "list"], ["verify"]])
def test_a_read_only_command_on_a_database_that_does_not_exist_creates_nothing(command, tmp_path, monkeypatch,
                                                                               capsys):
    missing = tmp_path / "var" / "tramita.sqlite"
    monkeypatch.setenv("TRAMITA_DATABASE_URL", f"sqlite:///{missing}")
    assert main(command) == 2
    assert "there is no database at" in capsys.readouterr().err
    assert not missing.parent.exists()


@pytest.mark.parametrize(("what", "sql"), [
    ("a rewritten event type's module", "UPDATE {table} SET topic = 'evil.module:Case.PetitionFiled' "
                                        "WHERE originator_id = ? AND originator_version = 1"),
    ("a first event's originator_topic", None),
])
def test_rewriting_a_topic_the_hash_does_not_cover_is_found(signed, capsys, what, sql):
    with StoredEvents(signed.url) as stored:
        if sql is not None:
            stored.execute(sql, stored.id_of(signed.case_id))
        else:
            [(state,)] = stored.execute("SELECT state FROM {table} WHERE originator_id = ? AND originator_version = 1",
                                        stored.id_of(signed.case_id))
            state = bytes(state).replace(b'"originator_topic":"domain.case:Case"',
                                         b'"originator_topic":"domain.registry:Municipality"')
            stored.set_state(stored.id_of(signed.case_id), 1, state)
    code, out = signed.verify(capsys)
    assert code == 1
    assert f"{signed.number}: 1 events, ALTERED at event 1" in out


def test_a_topic_naming_a_module_outside_the_domain_is_found_and_projected_as_a_failure_without_importing_it(
        signed, capsys):
    """Resolving a topic imports the module it names, which runs that module's code: `tramita.__main__` runs the
    command line (here it exited the verification, the projector and the rebuild with the arguments' error)."""
    assert "tramita.__main__" not in sys.modules
    with StoredEvents(signed.url) as stored:
        stored.execute("UPDATE {table} SET topic = 'tramita.__main__:Case.PetitionFiled' "
                       "WHERE originator_id = ? AND originator_version = 1", stored.id_of(signed.case_id))
    code, out = signed.verify(capsys)
    assert code == 1 and f"{signed.number}: 1 events, ALTERED at event 1" in out
    assert main(["rebuild"]) == 0  # every event read again
    assert str(signed.case_id) in capsys.readouterr().err  # named among those that could not be projected
    assert main(["project", "--once"]) == 0
    assert "tramita.__main__" not in sys.modules


def test_an_event_inserted_with_version_minus_one_is_named_and_stops_neither_the_projector_nor_verify(signed,
                                                                                                    capsys):
    """Its leaf entry wrote the version in 8 unsigned bytes, and raised: the projector (which appends the tree),
    the scan and `verify` all stopped on it, every time."""
    with StoredEvents(signed.url) as stored:
        [(topic, state)] = stored.execute("SELECT topic, state FROM {table} WHERE originator_id = ? AND "
                                          "originator_version = 12", stored.id_of(signed.case_id))
        stored.execute("INSERT INTO {table} (originator_id, originator_version, topic, state) VALUES (?, -1, ?, ?)",
                       stored.id_of(signed.case_id), topic, bytes(state))
    assert main(["project", "--once"]) == 0
    assert str(signed.case_id) in capsys.readouterr().err  # named among those that could not be projected
    code, out = signed.verify(capsys)
    assert code == 1 and f"ALTERED: {signed.number}, event -1" in out
    assert "DELETED" not in out  # every logged event is still stored: the inserted one is not the case's last


@pytest.mark.parametrize(("sql", "finding"), [
    ("UPDATE audit_state SET size = 'abc'", "TREE: the stored tree"),
    ("UPDATE audit_nodes SET hash = 'hello' WHERE level = 0 AND idx = (SELECT size - 1 FROM audit_state)",
     "TREE: the stored tree"),
    ("UPDATE audit_nodes SET hash = 10000000000 WHERE level = 0 AND idx = (SELECT size - 1 FROM audit_state)",
     "TREE: the stored tree"),
    ("UPDATE audit_leaves SET originator_id = 'garbage' WHERE leaf_index = 5", "TREE: the stored tree"),
    ("UPDATE audit_leaves SET originator_version = 'x' WHERE leaf_index = 5", "TREE: the stored tree"),
    ("UPDATE audit_checkpoints SET note = CAST(note AS BLOB)", "CHECKPOINT: a checkpoint (stored"),
    ("UPDATE audit_nodes SET idx = 5.5 WHERE level = 0 AND idx = 5", "TREE: the stored tree's node (0, 5) is missing"),
    ("UPDATE audit_nodes SET hash = CAST(hash AS TEXT) WHERE level = 0 AND idx = 5",
     "TREE: the stored tree's node (0, 5) is missing, or holds no 32-byte hash"),
    ("UPDATE audit_leaves SET event_hash = CAST(event_hash AS BLOB) WHERE leaf_index = 5",
     "TREE: the stored tree's record of leaf 5 was altered"),
    ("UPDATE audit_leaves SET originator_id = CAST(X'FF' AS TEXT) WHERE leaf_index = 5",
     "TREE: the stored tree's record of leaf 5 was altered"),
    ("UPDATE audit_nodes SET hash = CAST(X'FF' AS TEXT) WHERE level = 0 AND idx = (SELECT size - 1 FROM audit_state)",
     "TREE: the stored tree's node (0, 112) is missing"),
    ("UPDATE audit_state SET size = CAST(X'FF' AS TEXT)", "TREE: the stored tree was altered: the tree's state is not"),
    ("UPDATE audit_checkpoints SET note = CAST(X'FF' AS TEXT)", "CHECKPOINT: a checkpoint (stored"),
], ids=["state not a count", "node hash text", "node hash a number", "leaf id not a UUID", "leaf version text",
        "checkpoint note bytes", "node index made real", "node hash made text", "leaf hash made a blob",
        "leaf id not UTF-8", "frontier node not UTF-8", "state not UTF-8", "checkpoint note not UTF-8"])
def test_a_value_of_another_type_in_the_stored_tree_is_named_and_stops_neither_verify_nor_the_projector(
        signed_sqlite, capsys, sql, finding):
    """SQLite's columns take any value: each of these crashed `verify` and the projector (the number made
    `bytes(10000000000)`, ten gigabytes), joined into the same text as the value it replaced, or made the driver
    raise on the read (text that is not UTF-8), which stopped `verify`, the projector or the signer."""
    with sqlite3.connect(signed_sqlite.tmp / "tramita.sqlite") as database:
        database.execute(sql)
    code, out = signed_sqlite.verify(capsys)
    assert code == 1 and finding in out and "Traceback" not in out and "cannot read" not in out
    signed_sqlite.app().issue_token(Actor("admin", "token-administrator"), name="clerk", role="tre")
    assert main(["project", "--once"]) == 0  # the read models carry on
    assert main(["checkpoint"]) in (0, 1)  # signed, or refused with the tamper alarm: never "cannot read"
    assert "cannot read" not in capsys.readouterr().err


def test_an_altered_stored_tree_is_found_and_stops_neither_the_projector_nor_the_alarm(signed, capsys):
    with StoredEvents(signed.url) as stored:
        stored.execute("DELETE FROM audit_nodes WHERE level = 0 AND idx > 100")
    code, out = signed.verify(capsys)
    assert code == 1 and "TREE: the stored tree was altered at size" in out
    capsys.readouterr()
    assert main(["checkpoint"]) == 1 and "stored tree was altered" in capsys.readouterr().err
    with StoredEvents(signed.url) as stored:
        stored.execute("UPDATE audit_state SET size = 100, position = 100")  # rewound: the next leaves exist
    recording = make_app(signed.url, seed=False, signer=load_signing_key(signed.tmp / "keys" / "signing.key"))
    recording.issue_token(Actor("admin", "token-administrator"), name="clerk", role="tre")
    assert main(["project", "--once"]) == 0  # the read models carry on
    code, out = signed.verify(capsys)
    assert code == 1 and "TREE: the stored tree was altered: its state says 100 leaves" in out
    assert main(["rebuild-tree"]) == 0  # the cache rebuilt from the events, the checkpoints kept
    code, out = signed.verify(capsys)
    assert code == 0 and "VERDICT: intact" in out
    capsys.readouterr()
    assert main(["checkpoint"]) == 0  # the rebuilt tree extends the checkpoint signed before the damage


def test_a_topic_stored_as_bytes_is_named_not_a_crash(tmp_path, monkeypatch, capsys):
    url = f"sqlite:///{tmp_path / 'tramita.sqlite'}"
    monkeypatch.setenv("TRAMITA_DATABASE_URL", url)
    for variable in ("TRAMITA_SIGNING_KEY", "TRAMITA_VERIFIER_KEY", "TRAMITA_WITNESS_DIR"):
        monkeypatch.delenv(variable, raising=False)
    app = make_app(url)
    number = creation_1992(app, lambda line: None)
    with StoredEvents(url) as stored:
        stored.execute("UPDATE {table} SET topic = X'FFFE' WHERE originator_id = ? AND originator_version = 3",
                       stored.id_of(app.resolve_case(number)))
    capsys.readouterr()
    assert main(["verify"]) == 1
    assert f"{number}: 3 events, ALTERED at event 3" in capsys.readouterr().out
    assert main(["verify", number]) == 1
    assert "ALTERED at event 3" in capsys.readouterr().out


def _first_checkpoint_size(signed: Signed) -> int:
    with StoredEvents(signed.url) as stored:
        return int(stored.execute("SELECT MIN(size) FROM audit_checkpoints")[0][0])


@pytest.mark.parametrize(("sql", "finding"), [
    ("UPDATE audit_leaves SET event_hash = '" + "ab" * 32 + "' WHERE leaf_index = 5",
     "TREE: the stored tree's record of leaf 5 was altered: it no longer names the event stored there"),
    ("UPDATE audit_leaves SET notification_id = notification_id + 1000 WHERE leaf_index = 5",
     "as notification 6: its row was renumbered, or the stored tree's record of it was altered"),
    ("UPDATE audit_nodes SET hash = ? WHERE level = 0 AND idx = 5",
     "TREE: the stored tree's node (0, 5) is not the hash of the events under it (leaves 5..5): the events under it "
     "are as the checkpoint over them binds them, so the node was altered"),
    ("UPDATE audit_nodes SET hash = ? WHERE level = 1 AND idx = 2",
     "TREE: the stored tree's node (1, 2) is not the hash of the events under it (leaves 4..5)"),
    ("DELETE FROM audit_nodes WHERE level = 2 AND idx = 3", "TREE: the stored tree's node (2, 3) is missing"),
    ("UPDATE audit_state SET position = position - 10",
     "TREE: the stored tree was altered: its writer's position says notification"),
], ids=["leaf record's hash", "leaf record's notification", "leaf node", "inner node", "node deleted",
        "writer's position rewound"])
def test_an_altered_record_of_the_stored_tree_that_no_proof_of_a_checkpoint_takes_is_named_as_the_trees(
        signed, capsys, monkeypatch, sql, finding):
    """Each of these once passed as intact: only the checkpoints' roots were compared with the stored tree, and a
    leaf record or a node under them that no root takes was read only by the proofs of one case. (Batches of 3
    events, so that the tree is compared across batches.)"""
    monkeypatch.setattr("audit.verify.READ_BATCH", 3)
    with StoredEvents(signed.url) as stored:
        stored.execute(sql, *([bytes(range(32))] if "?" in sql else []))
    code, out = signed.verify(capsys)
    assert code == 1 and finding in out
    assert "1 finding" in out  # the events are named as they are: intact
    assert main(["rebuild-tree"]) == 0
    code, out = signed.verify(capsys)
    assert code == 0 and "VERDICT: intact" in out


def test_a_stored_checkpoints_root_rewritten_beside_its_note_is_named(signed, capsys):
    """The API's checkpoint list and the case file show the row's root; the note is what is signed."""
    with StoredEvents(signed.url) as stored:
        stored.execute("UPDATE audit_checkpoints SET root = ?", "A" * 43 + "=")
    code, out = signed.verify(capsys)
    assert code == 1
    assert f"CHECKPOINT: the stored checkpoint of size {_first_checkpoint_size(signed)}" in out
    assert "which its signed note does not" in out


def test_a_rewound_writers_position_stops_the_appending_with_an_alarm_instead_of_logging_events_twice(
        signed, capsys):
    with StoredEvents(signed.url) as stored:
        stored.execute("UPDATE audit_state SET position = position - 10")
        [(size_before,)] = stored.execute("SELECT size FROM audit_state")
    recording = make_app(signed.url, seed=False, signer=load_signing_key(signed.tmp / "keys" / "signing.key"))
    recording.issue_token(Actor("admin", "token-administrator"), name="clerk", role="tre")
    assert main(["project", "--once"]) == 0  # the read models carry on
    with StoredEvents(signed.url) as stored:
        assert stored.execute("SELECT size FROM audit_state") == [(size_before,)]  # nothing logged twice
    alerts = [recording.repository.get(n.originator_id) for n in recording.recorder.select_notifications(
        1, 10_000, topics=["domain.alerts:Alert.SystemRaised"])]
    assert any(a.kind == "tamper-alarm" and "position says" in a.message for a in alerts)
    capsys.readouterr()
    assert main(["checkpoint"]) == 1 and "position says" in capsys.readouterr().err
    assert main(["rebuild-tree"]) == 0
    capsys.readouterr()
    assert main(["checkpoint"]) == 0
    code, out = signed.verify(capsys)
    assert code == 0 and "VERDICT: intact" in out


def test_a_checkpoint_is_not_signed_over_stored_nodes_altered_since_the_last_one(signed, capsys):
    """The new root is made of the stored nodes; before, the log signed whatever they gave, and the events could
    never match a checkpoint again."""
    covered = _first_checkpoint_size(signed)
    recording = make_app(signed.url, seed=False, signer=load_signing_key(signed.tmp / "keys" / "signing.key"))
    for name in ("clerk 1", "clerk 2", "clerk 3"):
        recording.issue_token(Actor("admin", "token-administrator"), name=name, role="tre")
    assert main(["project", "--once"]) == 0
    with StoredEvents(signed.url) as stored:
        stored.execute("UPDATE audit_nodes SET hash = ? WHERE ((idx + 1) << level) > ?", bytes(range(32)), covered)
    capsys.readouterr()
    assert main(["checkpoint"]) == 1
    assert "are not the hash of their leaf records" in capsys.readouterr().err
    with StoredEvents(signed.url) as stored:
        assert stored.execute("SELECT COUNT(*) FROM audit_checkpoints") == [(1,)]
    assert main(["rebuild-tree"]) == 0
    capsys.readouterr()
    assert main(["checkpoint"]) == 0
    code, out = signed.verify(capsys)
    assert code == 0 and "VERDICT: intact" in out


def _set_signature(signed: Signed, version: int, signature: str | None) -> None:
    with StoredEvents(signed.url) as stored:
        state = dict(_rows_of(stored, signed.case_id))[version]
        if signature is None:
            state.pop("signature")
        else:
            state["signature"] = signature
        stored.set_state(stored.id_of(signed.case_id), version, json.dumps(state).encode())


def test_a_covered_events_signature_replaced_by_another_keys_or_by_garbage_is_found(signed, capsys):
    _set_signature(signed, 5, Signer.generate(ORIGIN).sign_event(bytes(56)))
    _set_signature(signed, 6, "não é uma assinatura")
    code, out = signed.verify(capsys)
    assert code == 1
    assert f"FORGED: {signed.number}, event 5: its signature is not one the log's key makes" in out
    assert f"FORGED: {signed.number}, event 6: its signature is not one the log's key makes" in out


def test_a_covered_events_signature_removed_is_found_as_removed(signed, capsys):
    _set_signature(signed, 5, None)
    code, out = signed.verify(capsys)
    assert code == 1
    assert f"UNSIGNED: {signed.number}, event 5 " in out and "its signature was removed" in out
    assert "recorded before the signing key existed" not in out


def test_a_covered_events_signature_copied_from_another_event_passes_the_form_check_and_all_signatures_finds_it(
        signed, capsys):
    """What a checkpoint covers, its signature binds: each event's own signature there is checked for its form
    only, and the verdict says so; `--all-signatures` checks each."""
    with StoredEvents(signed.url) as stored:
        copied = dict(_rows_of(stored, signed.case_id))[6]["signature"]
    _set_signature(signed, 5, copied)
    code, out = signed.verify(capsys)
    assert code == 0 and "signatures under the checkpoints were checked for their form only" in out
    code, out = signed.verify(capsys, "--all-signatures")
    assert code == 1 and f"FORGED: {signed.number}, event 5: its signature does not verify" in out


@pytest.mark.parametrize("batch", [7, 2000])
def test_an_intact_stored_tree_is_compared_a_batch_at_a_time_not_row_by_row(signed, capsys, monkeypatch, batch):
    """The database joins each batch's leaf records and each level's nodes into one value, compared whole: a
    store's full verification reads its tree in a few queries per 2,000 events (docs/benchmarks.md)."""
    import audit.log
    import audit.nodes

    def row_by_row(*args: object) -> None:
        raise AssertionError("an intact tree was read row by row")

    monkeypatch.setattr("audit.verify.READ_BATCH", batch)
    monkeypatch.setattr(audit.nodes, "read_span", row_by_row)
    monkeypatch.setattr(audit.log.AuditLog, "leaf_rows", lambda log, start, stop: (
        row_by_row() if stop - start > 1 else [(None, log.state()[1])]))
    code, out = signed.verify(capsys)
    assert code == 0 and "VERDICT: intact" in out


def test_a_node_altered_in_a_later_batch_is_named(signed, capsys, monkeypatch):
    monkeypatch.setattr("audit.verify.READ_BATCH", 7)
    with StoredEvents(signed.url) as stored:
        stored.execute("UPDATE audit_nodes SET hash = ? WHERE level = 2 AND idx = 10", bytes(32))
    code, out = signed.verify(capsys)
    assert code == 1 and "TREE: the stored tree's node (2, 10) is not the hash of the events under it (leaves " \
        "40..43)" in out and "1 finding" in out


def test_an_event_moved_to_the_end_of_the_log_is_named_as_missing_before_its_successor_not_as_deleted(
        signed_sqlite, capsys):
    """SQLite's notification id is the row's rowid: an administrator can give an event a later one."""
    with sqlite3.connect(signed_sqlite.tmp / "tramita.sqlite") as database:
        database.execute("UPDATE stored_events SET rowid = (SELECT MAX(rowid) + 1 FROM stored_events) "
                         "WHERE originator_id = ? AND originator_version = 14", (signed_sqlite.case_id.hex,))
    code, out = signed_sqlite.verify(capsys)
    assert code == 1
    assert f"{signed_sqlite.number}: 14 events, ALTERED at event 15" in out
    assert "events 14..14 are not before it in the log (deleted, or moved after it)" in out
    assert "were deleted from the store" in out  # the stored tree logged event 14 where event 15 now is


def _split_across_two(signed: Signed, table: str, column: str, key: str, first: int) -> None:
    """Move the last byte or character of one row's value into the next row's, so that the two joined are what
    they were: the rows `first` and `first + 1` of `table` by `key`."""
    where = f"{key} = ?" + (" AND level = 0" if table == "audit_nodes" else "")
    with StoredEvents(signed.url) as stored:
        [(one,)] = stored.execute(f"SELECT {column} FROM {table} WHERE {where}", first)
        [(two,)] = stored.execute(f"SELECT {column} FROM {table} WHERE {where}", first + 1)
        one, two = (bytes(one), bytes(two)) if table == "audit_nodes" else (one, two)
        stored.execute(f"UPDATE {table} SET {column} = ? WHERE {where}", one[:-1], first)
        stored.execute(f"UPDATE {table} SET {column} = ? WHERE {where}", one[-1:] + two, first + 1)


@pytest.mark.parametrize(("table", "column", "key", "finding"), [
    ("audit_leaves", "event_hash", "leaf_index", "TREE: the stored tree's record of leaf 5 was altered"),
    ("audit_leaves", "originator_id", "leaf_index", "TREE: the stored tree's record of leaf 5 was altered"),
    ("audit_nodes", "hash", "idx", "TREE: the stored tree's node (0, 5) is missing, or holds no 32-byte hash"),
], ids=["leaf hash", "leaf aggregate id", "node hash"])
def test_a_value_split_across_two_records_of_the_stored_tree_is_found_although_the_two_joined_are_unchanged(
        signed, capsys, table, column, key, finding):
    _split_across_two(signed, table, column, key, 5)
    code, out = signed.verify(capsys)
    assert code == 1 and finding in out


def test_a_leaf_record_moved_out_of_the_dense_indexes_is_found(signed, capsys):
    with StoredEvents(signed.url) as stored:
        stored.execute("UPDATE audit_leaves SET leaf_index = -1 WHERE leaf_index = 5")
    code, out = signed.verify(capsys)
    assert code == 1 and "TREE: the stored tree has no record of leaf 5" in out


def test_the_last_event_renumbered_is_not_blamed_on_the_tree_and_is_not_logged_twice(signed, capsys):
    """The checkpoint binds an event's id, version and hash, not its notification id: a renumbered row and an
    altered record cannot be told apart there, and the writer must not log the event again at its new place."""
    with StoredEvents(signed.url) as stored:
        if stored.placeholder == "?":
            stored.execute("UPDATE {table} SET rowid = rowid + 100 WHERE rowid = (SELECT MAX(rowid) FROM {table})")
        else:
            stored.execute("UPDATE {table} SET notification_id = notification_id + 100 WHERE notification_id = "
                           "(SELECT MAX(notification_id) FROM {table})")
        [(size,)] = stored.execute("SELECT size FROM audit_state")
    code, out = signed.verify(capsys)
    assert code == 1 and "its row was renumbered, or the stored tree's record of it was altered" in out
    assert "TREE" not in out
    assert main(["project", "--once"]) == 0  # the read models carry on; the log's writer stops with an alarm
    with StoredEvents(signed.url) as stored:
        assert stored.execute("SELECT size FROM audit_state") == [(size,)]
    capsys.readouterr()
    assert main(["checkpoint"]) == 1 and "does not name the event stored there" in capsys.readouterr().err


def _record_more(signed: Signed, count: int) -> None:
    recording = make_app(signed.url, seed=False, signer=load_signing_key(signed.tmp / "keys" / "signing.key"))
    for n in range(count):
        recording.issue_token(Actor("admin", "token-administrator"), name=f"clerk {n}", role="tre")


def test_a_node_stored_beyond_the_tree_is_found_and_the_log_stops_with_an_alarm_not_a_crash(signed, capsys):
    with StoredEvents(signed.url) as stored:
        [(size,)] = stored.execute("SELECT size FROM audit_state")
        stored.execute("INSERT INTO audit_nodes (level, idx, hash) VALUES (0, ?, ?)", size + 1, bytes(32))
    code, out = signed.verify(capsys)
    assert code == 1 and "TREE: the stored tree was altered: 1 of its nodes lie beyond its" in out
    _record_more(signed, 3)
    assert main(["project", "--once"]) == 0  # the read models carry on
    capsys.readouterr()
    assert main(["checkpoint"]) == 1 and "ALARME DE ADULTERAÇÃO" in capsys.readouterr().err


def test_the_signer_does_not_take_a_stored_checkpoints_row_for_its_signed_note(signed, capsys):
    """A row whose size was raised made the signer answer that the tree had not grown, and sign nothing."""
    with StoredEvents(signed.url) as stored:
        stored.execute("UPDATE audit_checkpoints SET size = 1000000")
    _record_more(signed, 3)
    assert main(["project", "--once"]) == 0
    capsys.readouterr()
    assert main(["checkpoint"]) == 1
    assert "its row says size 1000000" in capsys.readouterr().err


def test_the_signer_refuses_leaf_records_out_of_the_order_of_their_events(signed, capsys):
    """Two leaf records not yet under a checkpoint swapped, and every node written again from the records by the
    published recipe: signed, the events could never give that root."""
    _record_more(signed, 4)
    assert main(["project", "--once"]) == 0
    columns = "notification_id, originator_id, originator_version, event_hash"
    with StoredEvents(signed.url) as stored:
        [(size,)] = stored.execute("SELECT size FROM audit_state")
        [one] = stored.execute(f"SELECT {columns} FROM audit_leaves WHERE leaf_index = ?", size - 3)
        [two] = stored.execute(f"SELECT {columns} FROM audit_leaves WHERE leaf_index = ?", size - 2)
        stored.execute("DELETE FROM audit_leaves WHERE leaf_index IN (?, ?)", size - 3, size - 2)
        stored.execute(f"INSERT INTO audit_leaves (leaf_index, {columns}) VALUES (?, ?, ?, ?, ?)", size - 3, *two)
        stored.execute(f"INSERT INTO audit_leaves (leaf_index, {columns}) VALUES (?, ?, ?, ?, ?)", size - 2, *one)
        rows = stored.execute("SELECT originator_id, originator_version, event_hash FROM audit_leaves "
                              "ORDER BY leaf_index")
        frontier, nodes = merkle.Frontier(), []
        for aggregate_id, version, event_hash in rows:
            nodes += frontier.append(merkle.leaf_hash(entry_of(UUID(aggregate_id), version, event_hash)))
        stored.execute("DELETE FROM audit_nodes")
        for level, index, digest in nodes:
            stored.execute("INSERT INTO audit_nodes (level, idx, hash) VALUES (?, ?, ?)", level, index, digest)
    capsys.readouterr()
    assert main(["checkpoint"]) == 1
    assert "are not in the order of the events they name" in capsys.readouterr().err


@pytest.mark.parametrize("sql", [
    "UPDATE audit_leaves SET originator_id = '00000000-0000-0000-0000-000000000001' WHERE leaf_index = 5",
    "UPDATE audit_leaves SET originator_version = 99 WHERE leaf_index = 5",
], ids=["another aggregate", "a later version"])
def test_a_leaf_records_edit_is_the_trees_and_not_also_a_deletion_of_events(signed, capsys, sql):
    with StoredEvents(signed.url) as stored:
        stored.execute(sql)
    code, out = signed.verify(capsys)
    assert code == 1 and "TREE: the stored tree's record of leaf 5 was altered" in out and "DELETED" not in out


def test_a_signature_written_in_another_base64_text_of_the_same_bytes_is_found(signed, capsys):
    """Base64's last character carries bits no byte uses: flipping one gives other text for the same bytes, an
    edit of the event's row that the signature's own check would let pass."""
    alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
    with StoredEvents(signed.url) as stored:
        original = dict(_rows_of(stored, signed.case_id))[5]["signature"]
    _set_signature(signed, 5, original[:90] + alphabet[alphabet.index(original[90]) ^ 1] + original[91:])
    for flags in ((), ("--all-signatures",)):
        code, out = signed.verify(capsys, *flags)
        assert code == 1 and f"FORGED: {signed.number}, event 5" in out


def test_text_that_is_not_utf8_in_a_read_model_does_not_stop_verify(signed_sqlite, capsys):
    with sqlite3.connect(signed_sqlite.tmp / "tramita.sqlite") as database:
        database.execute("UPDATE cases SET number = CAST(X'FF' AS TEXT)")
    code, out = signed_sqlite.verify(capsys)
    # the events are intact; the read model that holds the bytes differs from them, and is named
    assert code == 1 and "VERDICT: intact" in out and "cases (case_id=" in out and "number" in out


def test_a_stored_note_altered_since_it_was_signed_is_never_handed_to_a_witness(signed_sqlite, capsys, monkeypatch):
    _record_more(signed_sqlite, 2)
    assert main(["project", "--once"]) == 0
    assert main(["checkpoint"]) == 0
    with sqlite3.connect(signed_sqlite.tmp / "tramita.sqlite") as database:
        database.execute("UPDATE audit_checkpoints SET note = CAST(note AS BLOB) WHERE size = "
                         "(SELECT MIN(size) FROM audit_checkpoints)")
    witness = signed_sqlite.tmp / "new-witness"
    monkeypatch.setenv("TRAMITA_WITNESS_DIR", str(witness))
    assert main(["checkpoint"]) in (0, 1)
    assert main(["scheduler", "--once"]) in (0, 1)
    assert not any(witness.glob("*.checkpoint"))  # the first is refused, and the rest wait behind it


def test_the_trees_state_row_deleted_is_found_and_stops_nothing(signed, capsys):
    """Read as an empty tree, its compare-and-set never moved: the writer retried forever."""
    with StoredEvents(signed.url) as stored:
        stored.execute("DELETE FROM audit_state")
    _record_more(signed, 1)
    assert main(["project", "--once"]) == 0
    code, out = signed.verify(capsys)
    assert code == 1 and "TREE: the stored tree was altered: the tree's state row was deleted" in out


def test_a_rebuild_of_the_tree_landing_under_an_append_is_a_conflict_not_a_tamper_alarm(signed):
    from audit.log import AuditLog, LogConflict
    from infrastructure.store import open_store

    app = make_app(signed.url, seed=False)
    writer = AuditLog(app, open_store(signed.url))
    writer.catch_up()
    _record_more(signed, 2)
    rebuilder = open_store(signed.url)
    select = app.recorder.select_notifications

    def reset_first(*args: object, **kwargs: object) -> object:
        app.recorder.select_notifications = select
        with rebuilder.transaction() as tx:  # what `rebuild-tree` does first
            tx.execute("DELETE FROM audit_leaves")
            tx.execute("DELETE FROM audit_nodes")
            tx.execute("UPDATE audit_state SET size = 0, position = 0 WHERE id = 1")
        return select(*args, **kwargs)

    app.recorder.select_notifications = reset_first
    with pytest.raises(LogConflict):
        writer.run_once()
    assert writer.catch_up() > 0  # from the reset tree on


def test_the_scheduler_survives_an_altered_tree_state_with_the_tamper_alarm(signed, capsys):
    with StoredEvents(signed.url) as stored:
        stored.execute("UPDATE audit_state SET position = -1")
    capsys.readouterr()
    assert main(["scheduler", "--once"]) == 1
    captured = capsys.readouterr()
    assert "tamper-alarm" in captured.out + captured.err and "Traceback" not in captured.err
