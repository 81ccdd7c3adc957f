"""The checks a log makes before it signs a checkpoint, whose failure is the tamper alarm (`AuditLog._sign`): a
checkpoint signed before still agrees with the tree, every event appended since is stored as logged (its hash,
its link, its signature), and the stored nodes the new root is made of are the hash of their leaf records."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, Protocol
from uuid import UUID

from audit import merkle
from audit.notes import Checkpoint, NoteError, Verifier, entry_of, open_checkpoint, verify_event_signature
from audit.reading import read_stored
from infrastructure.store import Store


class Leaf(Protocol):
    """A leaf record, as `audit.log.Leaf` holds it."""

    index: int
    notification_id: int
    aggregate_id: UUID
    version: int
    event_hash: str


class AuditLog(Protocol):
    """What these checks read of the log (`audit.log.AuditLog`), which calls them: named here, not imported."""

    app: Any
    batch_size: int

    def leaves(self, start: int, stop: int) -> list[Any]: ...

    def leaf_of(self, aggregate_id: UUID, version: int) -> Any: ...

    def frontier_at(self, size: int) -> merkle.Frontier: ...

    def root(self, size: int, subtree: merkle.Subtree | None = None) -> bytes: ...


def appended_problems(log: AuditLog, start: int, stop: int, verifier: Verifier, *,
                      signing_began: bool) -> list[str]:
    """Every leaf in [start, stop): its event stored as logged, its chain hash and link right, its signature
    valid (required once a checkpoint exists or an earlier event was signed)."""
    findings: list[str] = []
    if start >= stop:
        return findings
    leaves = log.leaves(start, stop)
    if len(leaves) != stop - start:
        return [f"the stored tree lacks leaf records between {start} and {stop}: it was altered"]
    if any(later.notification_id <= leaf.notification_id for leaf, later in zip(leaves, leaves[1:])):
        return [f"the stored tree's leaf records from {start} to {stop - 1} are not in the order of the events they "
                "name: they were altered"]
    by_id = {leaf.notification_id: leaf for leaf in leaves}
    seen: set[int] = set()
    for notification in _notifications(log, leaves[0].notification_id, leaves[-1].notification_id):
        seen.add(notification.id)
        leaf = by_id.get(notification.id)
        if leaf is None:
            findings.append(f"event {notification.originator_version} of {notification.originator_id} "
                            f"(notification {notification.id}) was inserted into the store after the events "
                            "around it were logged")
            continue
        problems, signed = _event_problems(log, leaf, notification, verifier, signing_began)
        findings += problems
        signing_began = signing_began or signed
    findings += [f"event {leaf.version} of {leaf.aggregate_id} (leaf {leaf.index}) was deleted from the store "
                 "after it was logged" for leaf in leaves if leaf.notification_id not in seen]
    return findings


def node_problems(log: AuditLog, start: int, stop: int, subtree: merkle.Subtree) -> list[str]:
    """The stored tree's root at `stop` is the one its leaf records give from the right edge at `start` (what
    the last checkpoint binds) on: the root about to be signed is made of the stored nodes, and
    `appended_problems` has judged the leaf records, not the nodes."""
    if start >= stop:
        return []
    frontier = log.frontier_at(start)
    for leaf in log.leaves(start, stop):
        frontier.push(merkle.leaf_hash(entry_of(leaf.aggregate_id, leaf.version, leaf.event_hash)))
    if frontier.size == stop and frontier.root() == log.root(stop, subtree):
        return []
    return [f"the stored tree's nodes over leaves {start}..{stop - 1} are not the hash of their leaf records: "
            "they were altered behind the log's writer"]


def _event_problems(log: AuditLog, leaf: Leaf, notification: Any, verifier: Verifier,
                signing_began: bool) -> tuple[list[str], bool]:
    """The problems of one logged event, and whether it carries a signature."""
    what = f"event {leaf.version} of {leaf.aggregate_id} (leaf {leaf.index})"
    if (notification.originator_id, notification.originator_version) != (leaf.aggregate_id, leaf.version):
        return [f"{what}: the store now holds event {notification.originator_version} of "
                f"{notification.originator_id} under its notification id"], False
    read = read_stored(log.app, notification)
    if not read.decodes:
        return [f"{what}: the stored event no longer decodes"], False
    problems = []
    if read.hash != leaf.event_hash:
        problems.append(f"{what} was rewritten after it was logged (logged hash {leaf.event_hash[:12]}…, "
                        f"stored {read.hash[:12]}…)")
    if not read.content_ok:
        problems.append(f"{what}: its content does not match its hash (altered)")
    if leaf.version > 1:
        previous = log.leaf_of(leaf.aggregate_id, leaf.version - 1)
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


def stored_event_count(app: Any, store: Store) -> int:
    """How many events the store holds (the events table of the library's recorder, in the same database)."""
    in_memory = getattr(app.recorder, "_stored_events", None)
    if in_memory is not None:
        return len(in_memory)
    return int(store.query(f"SELECT COUNT(*) FROM {app.recorder.events_table_name}")[0][0])


def _notifications(log: AuditLog, first_id: int, last_id: int) -> Iterator[Any]:
    start = first_id
    while start <= last_id:
        batch = log.app.recorder.select_notifications(start, log.batch_size, stop=last_id)
        if not batch:
            return
        yield from batch
        start = batch[-1].id + 1


def prior_problem(note: str, verifier: Verifier, size: int, root_at: Any) -> tuple[str | None, Checkpoint | None]:
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
