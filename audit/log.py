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
since the last one (chain, entry, signature): that refusal is the tamper alarm.
"""

from __future__ import annotations

import base64
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from datetime import date, datetime
from typing import Any
from uuid import UUID

from audit import merkle, nodes
from audit.notes import (
    Checkpoint, NoteError, Signer, Verifier, entry_of, open_checkpoint, verify_event_signature,
)
from audit.reading import read_stored, stored_chain_hash
from audit.tables import DDL
from projections.store import Store

#: Notifications appended per transaction.
BATCH_SIZE = 2000


class LogConflict(Exception):
    """Another writer moved the tree under this batch; it was rolled back and is read again."""


class TreeDamaged(Exception):
    """The stored tree cannot be extended: its nodes or its state were altered behind the writer's back."""


class TamperAlarm(Exception):
    """The log refuses to sign: what it holds is not what it signed before, or an event fails its checks."""

    def __init__(self, findings: Sequence[str]) -> None:
        super().__init__("; ".join(findings))
        self.findings = list(findings)


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
        rows = self.store.query("SELECT size, position FROM audit_state WHERE id = 1")
        if not rows:
            return 0, 0
        size, position = rows[0]
        if type(size) is not int or type(position) is not int or size < 0 or position < 0:
            raise TreeDamaged(f"the tree's state is not two counts (size {str(size)[:40]!r}, position "
                              f"{str(position)[:40]!r})")
        return size, position

    @property
    def size(self) -> int:
        return self.state()[0]

    # ------------------------------------------------------------------ appending

    def run_once(self) -> int:
        """Append the next batch of notifications; return how many (0: the tree has every stored event)."""
        size, position = self.state()
        if self._frontier is None or self._frontier.size != size:
            try:
                self._frontier = self._load_frontier(size)
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

    def _load_frontier(self, size: int) -> merkle.Frontier:
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
        rows = self.store.query("SELECT leaf_index, notification_id, originator_id, originator_version, event_hash "
                                "FROM audit_leaves WHERE originator_id = ? AND originator_version = ?",
                                (str(aggregate_id), version))
        return _leaf(rows[0]) if rows else None

    def leaves_of(self, aggregate_id: UUID) -> list[Leaf]:
        rows = self.store.query("SELECT leaf_index, notification_id, event_hash, originator_version FROM audit_leaves "
                                "WHERE originator_id = ? ORDER BY originator_version", (str(aggregate_id),))
        return [Leaf(int(index), int(notification), aggregate_id, int(version), event_hash)  # the id asked for
                for index, notification, event_hash, version in rows]

    def leaf_rows(self, start: int, stop: int) -> list[tuple[Any, ...]]:
        """The leaf records in [start, stop) as stored: (index, notification id, aggregate id text, version, hash)."""
        return self.store.query("SELECT leaf_index, notification_id, originator_id, originator_version, event_hash "
                                "FROM audit_leaves WHERE leaf_index >= ? AND leaf_index < ? ORDER BY leaf_index",
                                (start, stop))

    def leaves(self, start: int, stop: int) -> list[Leaf]:
        rows = self.store.query("SELECT leaf_index, notification_id, originator_id, originator_version, event_hash "
                                "FROM audit_leaves WHERE leaf_index >= ? AND leaf_index < ? ORDER BY leaf_index",
                                (start, stop))
        return [_leaf(row) for row in rows]

    # ------------------------------------------------------------------ checkpoints

    def checkpoints(self) -> list[StoredCheckpoint]:
        if not self.store.table_exists("audit_checkpoints"):
            return []
        rows = self.store.query("SELECT size, root, note, signed_at, legal_date FROM audit_checkpoints ORDER BY size")
        return [StoredCheckpoint(int(r[0]), r[1], r[2], r[3], r[4]) for r in rows]

    def checkpoint(self, size: int | None = None) -> StoredCheckpoint | None:
        """The checkpoint of `size`, or the latest (None: none signed)."""
        if not self.store.table_exists("audit_checkpoints"):
            return None
        if size is None:
            rows = self.store.query("SELECT size, root, note, signed_at, legal_date FROM audit_checkpoints "
                                    "ORDER BY size DESC LIMIT 1")
        else:
            rows = self.store.query("SELECT size, root, note, signed_at, legal_date FROM audit_checkpoints "
                                    "WHERE size = ?", (size,))
        return StoredCheckpoint(int(rows[0][0]), *rows[0][1:]) if rows else None

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
        for where, note in priors:
            problem, checkpoint = _judge_prior(note, signer.verifier, size, lambda n: self.root(n, subtree))
            if problem:
                findings.append(f"{where}: {problem}")
            elif checkpoint is not None:
                covered = max(covered, checkpoint.size)
        held = stored_event_count(self.app, self.store)
        if held != size and self.state()[1] >= (self.app.recorder.max_notification_id() or 0):
            findings.append(f"the store holds {held} events but the log has logged {size}: events were "
                            f"{'deleted' if held < size else 'inserted'} behind the application's back")
        findings = findings or self._check_appended(covered, size, signer.verifier, signing_began=bool(priors))
        if findings:
            raise TamperAlarm(findings)
        if last is not None and last.size >= size:
            return Signed(last, new=False)
        root = self.root(size, subtree)
        checkpoint = StoredCheckpoint(size, base64.b64encode(root).decode("ascii"),
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

    def _check_appended(self, start: int, stop: int, verifier: Verifier, *, signing_began: bool) -> list[str]:
        """Every leaf in [start, stop): its event stored as logged, its chain hash and link right, its signature
        valid (required once a checkpoint exists or an earlier event was signed)."""
        findings: list[str] = []
        if start >= stop:
            return findings
        leaves = self.leaves(start, stop)
        if len(leaves) != stop - start:
            return [f"the stored tree lacks leaf records between {start} and {stop}: it was altered"]
        by_id = {leaf.notification_id: leaf for leaf in leaves}
        seen: set[int] = set()
        for notification in _notifications(self.app, leaves[0].notification_id, leaves[-1].notification_id):
            seen.add(notification.id)
            leaf = by_id.get(notification.id)
            if leaf is None:
                findings.append(f"event {notification.originator_version} of {notification.originator_id} "
                                f"(notification {notification.id}) was inserted into the store after the events "
                                "around it were logged")
                continue
            problems, signed = self._judge_event(leaf, notification, verifier, signing_began)
            findings += problems
            signing_began = signing_began or signed
        findings += [f"event {leaf.version} of {leaf.aggregate_id} (leaf {leaf.index}) was deleted from the store "
                     "after it was logged" for leaf in leaves if leaf.notification_id not in seen]
        return findings

    def _judge_event(self, leaf: Leaf, notification: Any, verifier: Verifier,
                     signing_began: bool) -> tuple[list[str], bool]:
        """The problems of one logged event, and whether it carries a signature."""
        what = f"event {leaf.version} of {leaf.aggregate_id} (leaf {leaf.index})"
        if (notification.originator_id, notification.originator_version) != (leaf.aggregate_id, leaf.version):
            return [f"{what}: the store now holds event {notification.originator_version} of "
                    f"{notification.originator_id} under its notification id"], False
        read = read_stored(self.app, notification)
        if not read.decodes:
            return [f"{what}: the stored event no longer decodes"], False
        problems = []
        if read.hash != leaf.event_hash:
            problems.append(f"{what} was rewritten after it was logged (logged hash {leaf.event_hash[:12]}…, "
                            f"stored {read.hash[:12]}…)")
        if not read.content_ok:
            problems.append(f"{what}: its content does not match its hash (altered)")
        if leaf.version > 1:
            previous = self.leaf_of(leaf.aggregate_id, leaf.version - 1)
            if previous is None or read.prev_hash != previous.event_hash:
                problems.append(f"{what}: its prev_hash does not match the event before it in the log")
        if read.signature is None:
            if signing_began:
                problems.append(f"{what} carries no signature although signing had begun: forged, or recorded "
                                "by a process without the signing key")
        elif not verify_event_signature(verifier, entry_of(leaf.aggregate_id, leaf.version, read.hash),
                                        read.signature):
            problems.append(f"{what}: its signature does not verify (forged or altered)")
        return problems, read.signature is not None

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


def stored_event_count(app: Any, store: Store) -> int:
    """How many events the store holds (the events table of the library's recorder, in the same database)."""
    in_memory = getattr(app.recorder, "_stored_events", None)
    if in_memory is not None:
        return len(in_memory)
    return int(store.query(f"SELECT COUNT(*) FROM {app.recorder.events_table_name}")[0][0])


def _leaf(row: Sequence[Any]) -> Leaf:
    return Leaf(int(row[0]), int(row[1]), UUID(row[2]), int(row[3]), row[4])


def _notifications(app: Any, first_id: int, last_id: int) -> Iterator[Any]:
    start = first_id
    while start <= last_id:
        batch = app.recorder.select_notifications(start, BATCH_SIZE, stop=last_id)
        if not batch:
            return
        yield from batch
        start = batch[-1].id + 1


def _judge_prior(note: str, verifier: Verifier, size: int, root_at: Any) -> tuple[str | None, Checkpoint | None]:
    """What is wrong with a checkpoint signed before, against the tree of `size` (None: nothing)."""
    try:
        checkpoint = open_checkpoint(note, verifier)
    except NoteError as error:
        return f"it does not verify with the log's key ({error})", None
    if checkpoint.size > size:
        return (f"it was signed over {checkpoint.size} events but the log now holds {size}: "
                f"at least {checkpoint.size - size} were deleted"), checkpoint
    try:
        root = root_at(checkpoint.size)
    except merkle.ProofError as error:
        return f"the stored tree cannot be read at size {checkpoint.size} ({error})", checkpoint
    if root != checkpoint.root:
        return (f"the log is not consistent with it: the tree's root at size {checkpoint.size} is another "
                "(events before it were deleted, rewritten, inserted or reordered)"), checkpoint
    return None, checkpoint
