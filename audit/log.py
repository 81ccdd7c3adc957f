"""The Merkle log kept beside the events: every stored event a leaf, in commit order, with dense indexes.

Tables (in the events' database, beside the read models):
- `audit_state`: one row, the tree's size and the last notification id appended (the writer's position);
- `audit_leaves`: per leaf, its index, the notification id, the event's aggregate id, version and chain hash;
- `audit_nodes`: every perfect subtree's hash by (level, index at that level); level 0 holds the leaf hashes;
- `audit_checkpoints`: the signed checkpoints (the note, the size, the root, when it was signed and the legal
  date in Rio Branco);
- `audit_witnessed`: which witness received which checkpoint.

One writer keeps the tree in order: `AuditLog.run_once` appends the notifications after its position and moves
the position in the same transaction, compare-and-set, so a second writer (the projector and a scheduler's
catch-up, say) or a crash can neither skip nor double a leaf. Appending reads the right edge (O(log n) nodes)
and writes the leaf and the nodes it completes: never a re-hash of the log. Notification ids may have gaps; leaf
indexes have none.

These tables are a cache: `audit.verify` rebuilds the tree from the events and compares; what binds is the
checkpoints' signatures. Signing a checkpoint (`sign_checkpoint`) refuses a tree that is smaller than, or not
consistent with, any checkpoint signed before (stored, or held by a witness), and checks every event appended
since the last one (chain, entry, signature) and the nodes the new root is made of (`audit/alarm.py`): that
refusal is the tamper alarm.
"""

from __future__ import annotations

import base64
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import date, datetime
from typing import Any
from uuid import UUID

from audit import alarm, merkle, nodes
from audit.notes import Checkpoint, Signer, entry_of
from audit.reading import stored_chain_hash
from audit.tables import DDL, count_of, read_text, text_of
from infrastructure.store import Store

#: Notifications appended per transaction.
BATCH_SIZE = 2000


class LogConflict(Exception):
    """Another writer moved the tree under this batch; it was rolled back and is read again."""


class TreeDamaged(merkle.ProofError):
    """The stored tree cannot be extended: its nodes or its state were altered behind the writer's back."""


class TamperAlarm(Exception):
    """The log refuses to sign: what it holds is not what it signed before, or an event fails its checks; or, with
    `by_witnesses`, the log signed and its cosigning witnesses refused the checkpoint (a rollback or a fork)."""

    def __init__(self, findings: Sequence[str], by_witnesses: bool = False) -> None:
        super().__init__("; ".join(findings))
        self.findings = list(findings)
        self.by_witnesses = by_witnesses


@dataclass(frozen=True)
class Leaf:
    index: int
    notification_id: int
    aggregate_id: UUID
    version: int
    event_hash: str


@dataclass(frozen=True)
class StoredCheckpoint:
    size: int
    root: str
    """Standard base64, as in the note."""
    note: str
    signed_at: str
    legal_date: str

    def as_dict(self) -> dict[str, Any]:
        return dict(vars(self))


@dataclass(frozen=True)
class Signed:
    checkpoint: StoredCheckpoint
    new: bool
    """False: the tree had not grown since the last checkpoint, which is returned."""


class AuditLog:
    """The stored tree of one application's event log, and its checkpoints."""

    def __init__(self, app: Any, store: Store, *, batch_size: int = BATCH_SIZE) -> None:
        self.app, self.store, self.batch_size = app, store, batch_size
        self._frontier: merkle.Frontier | None = None

    # ------------------------------------------------------------------ tables

    def migrate(self) -> None:
        """Create the log's tables (once)."""
        with self.store.transaction() as tx:
            for statement in DDL[self.store.dialect]:
                tx.execute(statement)
            if not tx.execute("SELECT 1 FROM audit_state WHERE id = 1").fetchall():
                tx.execute("INSERT INTO audit_state (id, size, position) VALUES (1, 0, 0)")

    def exists(self) -> bool:
        return self.store.table_exists("audit_state")

    def state(self) -> tuple[int, int]:
        """(tree size, last notification id appended)."""
        return self._state("")[:2]  # type: ignore[return-value]

    def state_with_records(self) -> tuple[Any, ...]:
        """`state`, and in the same snapshot: how many leaf records, their least and greatest index, the
        notification id the last one holds, and how many nodes lie beyond the tree (or have no place in one)."""
        return self._state(
            ", (SELECT COUNT(*) FROM audit_leaves), (SELECT MIN(leaf_index) FROM audit_leaves), (SELECT "
            "MAX(leaf_index) FROM audit_leaves), (SELECT notification_id FROM audit_leaves WHERE leaf_index = "
            "s.size - 1), (SELECT COUNT(*) FROM audit_nodes WHERE NOT (level >= 0 AND level < 64 AND idx >= 0 AND "
            "((idx + 1) << level) <= s.size))")

    def _state(self, more: str) -> tuple[Any, ...]:
        dialect = self.store.dialect
        rows = self.store.query(f"SELECT {count_of(dialect, 's.size')}, {count_of(dialect, 's.position')}{more} "
                                "FROM audit_state s WHERE s.id = 1")
        if not rows:  # `migrate` writes the row with the table: deleted since
            raise TreeDamaged("the tree's state row was deleted")
        size, position = rows[0][:2]
        if type(size) is not int or type(position) is not int or size < 0 or position < 0:
            raise TreeDamaged(f"the tree's state is not two counts (size {str(size)[:40]!r}, position "
                              f"{str(position)[:40]!r})")
        return rows[0]

    @property
    def size(self) -> int:
        return self.state()[0]

    # ------------------------------------------------------------------ appending

    def run_once(self) -> int:
        """Append the next batch of notifications; return how many (0: the tree has every stored event)."""
        size, position = self.state()
        if self._frontier is None or self._frontier.size != size:
            try:
                self._frontier = self.frontier_at(size)
            except merkle.ProofError as error:
                raise TreeDamaged(str(error)) from None
        notifications = self.app.recorder.select_notifications(position, self.batch_size, inclusive_of_start=False)
        if not notifications:
            return 0
        frontier = merkle.Frontier(self._frontier.size, self._frontier.nodes)
        leaves, completed_nodes = [], []
        for notification in notifications:
            chain_hash = stored_chain_hash(self.app, notification.state)
            entry = entry_of(notification.originator_id, notification.originator_version, chain_hash)
            completed = frontier.append(merkle.leaf_hash(entry))
            leaves.append((frontier.size - 1, notification.id, str(notification.originator_id),
                           notification.originator_version, chain_hash))
            completed_nodes.extend(completed)
        with self.store.transaction() as tx:
            moved = tx.execute("UPDATE audit_state SET size = ?, position = ? WHERE id = 1 AND size = ? "
                               "AND position = ?", (frontier.size, notifications[-1].id, size, position))
            if moved.rowcount != 1:
                self._frontier = None
                raise LogConflict("the tree moved under the batch")
            if not self._last_leaf_is_at(size, position):  # appending from there would log events twice, or never
                self._frontier = None  # (checked once the state is this batch's: a rebuild may have just reset it)
                raise TreeDamaged(f"the tree's position says notification {position} was the last logged, but the "
                                  "record of its last leaf does not name the event stored there (the position, the "
                                  "record or the event's row was altered)")
            try:
                tx.executemany("INSERT INTO audit_leaves (leaf_index, notification_id, originator_id, "
                               "originator_version, event_hash) VALUES (?, ?, ?, ?, ?)", leaves)
                tx.executemany("INSERT INTO audit_nodes (level, idx, hash) VALUES (?, ?, ?)", completed_nodes)
            except self.store.integrity_errors as error:  # leaves beyond the recorded size: the state was rewound
                self._frontier = None
                raise TreeDamaged(f"the tree's state says {size} leaves but more are stored ({error})") from None
        self._frontier = frontier
        return len(notifications)

    def rebuild_tree(self) -> int:
        """Rebuild the stored tree (a cache) from the events, keeping every checkpoint; the leaves appended.

        For a tree a `TREE` finding says was altered: signing the next checkpoint then checks the rebuilt tree
        against every checkpoint signed before, as always."""
        with self.store.transaction() as tx:
            tx.execute("DELETE FROM audit_leaves")
            tx.execute("DELETE FROM audit_nodes")
            tx.execute("UPDATE audit_state SET size = 0, position = 0 WHERE id = 1")
        self._frontier = None
        return self.catch_up()

    def catch_up(self) -> int:
        """Append until the tree holds every stored event; a batch another writer got in first is read again."""
        total = 0
        while True:
            try:
                done = self.run_once()
            except LogConflict:
                continue
            if done == 0:
                return total
            total += done

    def frontier_at(self, size: int) -> merkle.Frontier:
        """The right edge of the stored tree of `size` (ProofError when a node of it is missing or no hash)."""
        positions = merkle.frontier_positions(size)
        return merkle.Frontier(size, [(level, nodes.read_one(self.store, level, i)) for level, i in positions])

    # ------------------------------------------------------------------ reading the tree

    def reader(self) -> merkle.Subtree:
        """A `Subtree` over the stored perfect nodes, memoised for one read (a proof, an export)."""
        return nodes.stored_subtree(self.store)

    def proofs(self, size: int, leaves: Iterable[int]) -> nodes.Proofs:
        """The root of the tree of `size` and the inclusion proofs of `leaves` in it, every stored node they take
        read first in a few queries (a case's verdict or export: hundreds of proofs, not a query per node)."""
        return nodes.Proofs(self.store, self.size, size, leaves)

    def root(self, size: int, subtree: merkle.Subtree | None = None) -> bytes:
        if size == 0:
            return merkle.EMPTY_ROOT
        if size > self.size:
            raise merkle.ProofError(f"the tree has {self.size} leaves, not {size}")
        return (subtree or self.reader())(0, size)

    def inclusion(self, index: int, size: int, subtree: merkle.Subtree | None = None) -> list[bytes]:
        if size > self.size:
            raise merkle.ProofError(f"the tree has {self.size} leaves, not {size}")
        return merkle.inclusion_proof(index, size, subtree or self.reader())

    def consistency(self, first: int, second: int) -> list[bytes]:
        if second > self.size:
            raise merkle.ProofError(f"the tree has {self.size} leaves, not {second}")
        return merkle.consistency_proof(first, second, self.reader())

    def leaf_of(self, aggregate_id: UUID, version: int) -> Leaf | None:
        rows = self.store.query(f"SELECT {self._leaf_columns} FROM audit_leaves WHERE originator_id = ? AND "
                                "originator_version = ?", (str(aggregate_id), version))
        return _leaf(rows[0]) if rows else None

    def leaves_of(self, aggregate_id: UUID) -> list[Leaf]:
        rows = self.store.query(f"SELECT {self._leaf_columns} FROM audit_leaves WHERE originator_id = ? "
                                "ORDER BY originator_version", (str(aggregate_id),))
        return [_leaf(row) for row in rows]

    @property
    def _leaf_columns(self) -> str:
        """A leaf record's columns, each read as the writer stores it whatever it holds now (`_leaf` judges it)."""
        dialect = self.store.dialect
        return (f"{count_of(dialect, 'leaf_index')}, {count_of(dialect, 'notification_id')}, "
                f"{text_of(dialect, 'originator_id')}, {count_of(dialect, 'originator_version')}, "
                f"{text_of(dialect, 'event_hash')}")

    def leaf_rows(self, start: int, stop: int) -> list[tuple[Any, ...]]:
        """The leaf records in [start, stop) as stored: (index, notification id, aggregate id text, version, hash)."""
        return self.store.query("SELECT leaf_index, notification_id, originator_id, originator_version, event_hash "
                                "FROM audit_leaves WHERE leaf_index >= ? AND leaf_index < ? ORDER BY leaf_index",
                                (start, stop))

    def _last_leaf_is_at(self, size: int, position: int) -> bool:
        """Whether the record of leaf `size - 1` names the event stored at notification `position` (an empty tree:
        position 0), compared in the database (a record's values are never read: any may have been edited)."""
        if size == 0:
            return position == 0
        stored = self.app.recorder.select_notifications(position, 1)
        if not stored or stored[0].id != position:
            return False
        event = stored[0]
        return bool(self.store.query("SELECT COUNT(*) FROM audit_leaves WHERE leaf_index = ? AND notification_id = ? "
                                     "AND originator_id = ? AND originator_version = ?",
                                     (size - 1, position, str(event.originator_id), event.originator_version))[0][0])

    @contextmanager
    def read_leniently(self) -> Iterator[AuditLog]:
        """This log over a connection that reads any text its tables hold (bytes that are no UTF-8 as U+FFFD, where
        SQLite's driver would raise), for a verification that must name every edit rather than stop at one."""
        reader = self.store.lenient_reader()
        try:
            yield self if reader is self.store else AuditLog(self.app, reader, batch_size=self.batch_size)
        finally:
            if reader is not self.store:
                reader.close()

    def leaves(self, start: int, stop: int) -> list[Leaf]:
        rows = self.store.query(f"SELECT {self._leaf_columns} FROM audit_leaves WHERE leaf_index >= ? AND "
                                "leaf_index < ? ORDER BY leaf_index", (start, stop))
        return [_leaf(row) for row in rows]

    # ------------------------------------------------------------------ checkpoints

    def checkpoints(self) -> list[StoredCheckpoint]:
        if not self.store.table_exists("audit_checkpoints"):
            return []
        rows = self.store.query(f"SELECT {self._checkpoint_columns} FROM audit_checkpoints ORDER BY size")
        return [_checkpoint(row) for row in rows]

    def checkpoint(self, size: int | None = None) -> StoredCheckpoint | None:
        """The checkpoint of `size`, or the latest (None: none signed)."""
        if not self.store.table_exists("audit_checkpoints"):
            return None
        if size is None:
            rows = self.store.query(f"SELECT {self._checkpoint_columns} FROM audit_checkpoints ORDER BY size DESC "
                                    "LIMIT 1")
        else:
            rows = self.store.query(f"SELECT {self._checkpoint_columns} FROM audit_checkpoints WHERE size = ?",
                                    (size,))
        return _checkpoint(rows[0]) if rows else None

    @property
    def _checkpoint_columns(self) -> str:
        """A stored checkpoint's columns, its texts read whatever they hold (a note that is no text reads as None,
        which no verifier accepts)."""
        dialect = self.store.dialect
        return (f"size, {text_of(dialect, 'root')}, {text_of(dialect, 'note')}, {text_of(dialect, 'signed_at')}, "
                f"{text_of(dialect, 'legal_date')}")

    def sign_checkpoint(self, signer: Signer, *, signed_at: datetime, legal_date: date,
                        known: Iterable[str] = ()) -> Signed:
        """Sign the tree as it now stands, unless it does not extend every checkpoint signed before.

        `known` are checkpoints held outside the database (the witnesses' copies), which an attacker who can
        write the database cannot reach. Raises TamperAlarm (nothing signed) when a checkpoint does not verify,
        names another origin, is larger than the tree, or has another root than the tree at its size; when the
        store holds another number of events than the tree has leaves; or when an event appended since the last
        checkpoint fails its checks. The checks read without holding a lock (the tree below a size never
        changes), so a long backlog never holds up the acts being recorded; only the insert is locked, and a
        checkpoint another signer got in first is returned instead of a smaller one after it.
        """
        try:
            return self._sign(signer, signed_at, legal_date, known)
        except (TreeDamaged, merkle.ProofError) as damaged:
            raise TamperAlarm([f"the stored tree was altered behind the log's writer: {damaged}"]) from None

    def _sign(self, signer: Signer, signed_at: datetime, legal_date: date, known: Iterable[str]) -> Signed:
        self.catch_up()
        size = self.size
        last = self.checkpoint()
        subtree = self.reader()
        priors: list[tuple[str, str]] = [(f"the stored checkpoint of size {last.size}", last.note)] if last else []
        priors += [("a checkpoint held by a witness", note) for note in known]
        findings, covered = [], 0
        for i, (where, note) in enumerate(priors):
            problem, checkpoint = alarm.prior_problem(note, signer.verifier, size, lambda n: self.root(n, subtree))
            if problem:
                findings.append(f"{where}: {problem}")
            elif checkpoint is not None:
                covered = max(covered, checkpoint.size)
                if i == 0 and last is not None and (last.size, last.root) != (checkpoint.size, b64(checkpoint.root)):
                    findings.append(f"{where}: its row says size {last.size}, root {str(last.root)[:60]!r}, which "
                                    "its signed note does not: the row was altered")
        held = alarm.stored_event_count(self.app, self.store)
        if held != size and self.state()[1] >= (self.app.recorder.max_notification_id() or 0):
            findings.append(f"the store holds {held} events but the log has logged {size}: events were "
                            f"{'deleted' if held < size else 'inserted'} behind the application's back")
        findings = findings or alarm.appended_problems(self, covered, size, signer.verifier,
                                                       signing_began=bool(priors)) \
            or alarm.node_problems(self, covered, size, subtree)
        if findings:
            raise TamperAlarm(findings)
        if last is not None and last.size >= size:
            return Signed(last, new=False)
        root = self.root(size, subtree)
        checkpoint = StoredCheckpoint(size, b64(root),
                                      signer.sign_note(Checkpoint(signer.name, size, root).text()),
                                      signed_at.isoformat(), legal_date.isoformat())
        lock = " FOR UPDATE" if self.store.dialect == "postgresql" else ""
        with self.store.transaction() as tx:
            tx.execute(f"SELECT size FROM audit_state WHERE id = 1{lock}")  # one signer inserts at a time
            latest = self.checkpoint()
            if latest is not None and latest.size >= size:
                return Signed(latest, new=False)
            tx.execute("INSERT INTO audit_checkpoints (size, root, note, signed_at, legal_date) VALUES (?, ?, ?, ?, ?)",
                       (checkpoint.size, checkpoint.root, checkpoint.note, checkpoint.signed_at, checkpoint.legal_date))
        return Signed(checkpoint, new=True)

    # ------------------------------------------------------------------ witnesses

    def record_witnessed(self, size: int, witness: str, at: datetime) -> None:
        with self.store.transaction() as tx:
            if not tx.execute("SELECT 1 FROM audit_witnessed WHERE size = ? AND witness = ?",
                              (size, witness)).fetchall():
                tx.execute("INSERT INTO audit_witnessed (size, witness, delivered_at) VALUES (?, ?, ?)",
                           (size, witness, at.isoformat()))

    def unwitnessed(self, witness: str) -> list[StoredCheckpoint]:
        """The checkpoints `witness` has not received yet, oldest first."""
        delivered = {int(r[0]) for r in self.store.query("SELECT size FROM audit_witnessed WHERE witness = ?",
                                                          (witness,))}
        return [c for c in self.checkpoints() if c.size not in delivered]


def b64(digest: bytes) -> str:
    """A hash as a checkpoint writes it: standard padded base64."""
    return base64.b64encode(digest).decode("ascii")


def _checkpoint(row: Sequence[Any]) -> StoredCheckpoint:
    return StoredCheckpoint(int(row[0]), *(read_text(value) for value in row[1:]))  # type: ignore[arg-type]


def _leaf(row: Sequence[Any]) -> Leaf:
    """A leaf record read by `AuditLog._leaf_columns`; ProofError (the stored tree was altered) for one that is not
    what the writer stores."""
    index, notification, aggregate_id, version, event_hash = row[0], row[1], read_text(row[2]), row[3], \
        read_text(row[4])
    try:
        if not (type(index) is type(notification) is type(version) is int and isinstance(event_hash, str)):
            raise ValueError("a value of another type")
        return Leaf(index, notification, UUID(aggregate_id), version, event_hash)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        raise merkle.ProofError(f"the stored tree's record of leaf {str(index)[:40]} is not a leaf record "
                                f"({str(aggregate_id)[:60]!r}, event {str(version)[:40]!r}): it was altered") from None
