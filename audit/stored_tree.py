"""The stored tree (a cache: `audit_leaves`, `audit_nodes`, `audit_state`) checked against the tree a full
verification rebuilds from the events: its state, its leaf records and every node, so that an administrator's edit
of the cache is named as such, and an edit of the events as theirs (`audit/verify.py`)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any
from uuid import UUID

from audit import merkle, nodes
from audit.log import AuditLog, TreeDamaged
from audit.verdict import ChainHead, Finding, Verdict


def check_stored_tree(log: AuditLog, signed: dict[int, bytes], verdict: Verdict) -> None:
    """The stored tree (the cache proofs and new checkpoints are made from) as a whole, after the pass: its state
    agrees with its leaf records (their count, and its writer's position the last one's notification), and its
    root at each checkpoint the events match is the signed one."""
    try:
        # one statement, one snapshot: the log's writer may append while this runs
        size, position, count, bottom, top, logged, beyond = log.state_with_records()
    except TreeDamaged as damaged:
        verdict.add(Finding("tree", f"the stored tree was altered: {damaged}: proofs and new checkpoints cannot be "
                            "made from it"))
        return
    if int(count) != size or (count and (int(bottom), int(top)) != (0, size - 1)):
        verdict.add(Finding("tree", f"the stored tree was altered: its state says {size} leaves, {count} leaf records "
                            "are stored: proofs and new checkpoints cannot be made from it"))
        return
    if (logged if size else 0) != position:
        verdict.add(Finding("tree", f"the stored tree was altered: its writer's position says notification "
                            f"{position} was the last logged, its last leaf record notification {str(logged)[:40]}: "
                            "the next events would be logged twice or never"))
        return
    if beyond:
        verdict.add(Finding("tree", f"the stored tree was altered: {beyond} of its nodes lie beyond its {size} leaves "
                            "(or have no place in a tree): the next events could not be logged"))
        return
    subtree = log.reader()
    for checkpoint_size, root in sorted(signed.items()):
        try:
            stored = log.root(checkpoint_size, subtree) if checkpoint_size <= size else None
        except merkle.ProofError as error:
            stored, problem = None, str(error)
        else:
            problem = "its root there is not the signed one"
        if stored != root:
            verdict.add(Finding("tree", f"the stored tree was altered at size {checkpoint_size}: {problem} "
                                "(the events still give the signed root; proofs and new checkpoints made from the "
                                "stored tree would be wrong)"))
            return


def node_spans(first: int, stop: int) -> list[tuple[int, int, int]]:
    """(level, first index, last index) of the perfect nodes whose last leaf is in [first, stop), level by level."""
    return [(level, first >> level, (stop >> level) - 1) for level in range(stop.bit_length())
            if (stop >> level) - 1 >= first >> level]


@dataclass(slots=True)
class Batch:
    """The leaf records and perfect nodes a batch of events gives the tree, as the stored tree should hold them."""

    first: int
    hashes: list[str] = field(default_factory=list)
    ids: list[str] = field(default_factory=list)
    versions: list[Any] = field(default_factory=list)
    notifications: list[int] = field(default_factory=list)
    nodes: list[tuple[int, int, bytes]] = field(default_factory=list)
    """(level, index, hash) of the nodes the batch's leaves complete, the leaves included, in the order they
    complete them (`merkle.Frontier.append`)."""


#: A batch's leaf records [first, stop): how many, how many of the types the writer stores (SQLite keeps any
#: value in any column; text that also reads alike as a number or a blob would join into the same text), and each
#: column in leaf order joined with commas (none of the values the writer stores holds one).
_LEAVES_SQL = {
    "sqlite": "SELECT COUNT(*), SUM(typeof(event_hash) = 'text' AND typeof(originator_id) = 'text' AND "
              "typeof(originator_version) = 'integer' AND typeof(notification_id) = 'integer'), "
              "group_concat(event_hash, ','), group_concat(originator_id, ','), group_concat(originator_version, ','), "
              "group_concat(notification_id, ',') FROM (SELECT * FROM audit_leaves WHERE leaf_index >= ? AND "
              "leaf_index < ? ORDER BY leaf_index)",
    "postgresql": "SELECT COUNT(*), COUNT(*), string_agg(event_hash, ',' ORDER BY leaf_index), "
                  "string_agg(originator_id, ',' ORDER BY leaf_index), string_agg(originator_version::text, ',' "
                  "ORDER BY leaf_index), "
                  "string_agg(notification_id::text, ',' ORDER BY leaf_index) FROM audit_leaves WHERE leaf_index >= ? "
                  "AND leaf_index < ?",
}
#: The nodes a batch's leaves complete. On SQLite they are read by rowid, which the writer gives them in the order
#: the leaves complete them (`AuditLog.run_once`): the nodes leaves [0, n) complete are rows 1 to 2n - popcount(n)
#: of a tree written from empty, one sequential read instead of a lookup per node, compared whole with the rebuilt
#: (level, index, hash) in that order (a tree written otherwise only takes the slow path; equal rows are those
#: nodes under their keys, which the key keeps unique). On PostgreSQL, per level: (level, count, how many hold a
#: 32-byte hash, least index, greatest index, the hashes in index order as one value), through the key (a range of
#: indexes per level).
_NODES_SQL = {
    "sqlite": "SELECT level, idx, hash FROM audit_nodes WHERE rowid > ? AND rowid <= ? ORDER BY rowid",
    "postgresql": "SELECT level, COUNT(*), SUM(CASE WHEN octet_length(hash) = 32 THEN 1 ELSE 0 END), MIN(idx), "
                  "MAX(idx), string_agg(hash, ''::bytea ORDER BY idx) FROM audit_nodes WHERE {spans} GROUP BY level "
                  "ORDER BY level",
}


def _completed_before(leaves: int) -> int:
    """How many perfect nodes (the leaves included) the first `leaves` leaves complete: 2n - popcount(n)."""
    return 2 * leaves - leaves.bit_count()


class StoredTreeCheck:
    """The stored tree (a cache: its leaf records and perfect nodes), compared batch by batch with the tree rebuilt
    from the events, to name what changed since it was logged: an event, or the cache itself.

    The first leaf record that differs is judged once the pass knows which events the signatures bind (`judge`):
    under a checkpoint the events still match, or at an event whose own signature verifies, the record is what
    changed (TREE); elsewhere the events are (DELETED, INSERTED, REORDERED, REWRITTEN). The stored nodes are
    compared over the leaves before the first difference (the nodes over it differ too, and say nothing more).
    Each batch is compared whole, in two queries, and only a batch that differs is looked at event by event."""

    def __init__(self, log: AuditLog | None) -> None:
        self.log = log if log is not None and log.exists() else None
        try:
            self.size = self.log.size if self.log else 0
        except TreeDamaged:  # its state altered: `check_stored_tree` names it; no record is compared
            self.size = 0
        self.divergence: int | None = None
        """The first leaf whose record differs from the event stored there."""
        self._pending: tuple[Finding, bool, bool] | None = None
        """What that difference means when the event is not bound; whether the event's own signature binds it; and
        whether a checkpoint over it would (it binds the event's id, version and hash, not its notification id)."""
        self._missing: int | None = None
        """A leaf whose record is missing from the dense indexes."""
        self._node: tuple[int, int, bool] | None = None
        """The first stored node that differs from the rebuilt one: (level, index, missing)."""
        self.unmatched: list[tuple[int, Finding]] = []
        """The checkpoints the events no longer match, with their findings."""
        self.records_altered = False
        """A leaf record was found altered (a TREE finding)."""
        self.matched = 0
        """The leaf records [0, matched) were found, batch by batch, to be those of the events, with integer
        versions."""

    def comparing(self, index: int) -> bool:
        """Whether the batch starting at leaf `index` is compared with the stored tree."""
        return self.log is not None and index < self.size and self.divergence is None

    def compare_batch(self, batch: Batch, notifications: list[Any], heads: dict[UUID, ChainHead],
                      verified: set[int]) -> None:
        """A batch's leaf records and nodes against those rebuilt from its events: each column, and each level's
        nodes, aggregated by the database into one value and compared whole; a batch that differs is then read
        row by row to name the first difference."""
        assert self.log is not None
        store = self.log.store
        first = batch.first
        stop = min(first + len(batch.hashes), self.size)
        count = stop - first
        stored = store.query(_LEAVES_SQL[store.dialect], (first, stop))[0]
        if stored == (count, count, ",".join(batch.hashes[:count]), ",".join(batch.ids[:count]),
                      ",".join(map(str, batch.versions[:count])), ",".join(map(str, batch.notifications[:count]))):
            if self._node is None:
                self._compare_nodes(first, stop, batch.nodes)
            if self.matched == first and all(type(version) is int for version in batch.versions[:count]):
                self.matched = stop
            return
        rows = self.log.leaf_rows(first, stop)
        logged = list(zip(range(first, stop), batch.notifications, batch.ids, batch.versions, batch.hashes))
        at = next((i for i, (row, wanted) in enumerate(zip(rows, logged)) if row != wanted), len(rows))
        if at < count:
            if at < len(rows) and rows[at][0] == first + at:
                self._differs(first + at, rows[at], notifications[at], batch.hashes[at], heads, first + at in verified)
            else:
                self.divergence, self._missing = first + at, first + at
        if self._node is None and at:
            self._compare_nodes(first, first + at, batch.nodes)

    def _compare_nodes(self, first: int, stop: int, completed: list[tuple[int, int, bytes]]) -> None:
        """The stored nodes that leaves [first, stop) complete against the rebuilt ones in `completed` (from leaf
        `first` on): all of them at once first, then, where they differ, node by node through the key."""
        store = self.log.store  # type: ignore[union-attr]
        spans = node_spans(first, stop)
        levels: list[list[bytes]] = [[] for _ in range(64)]
        if store.dialect == "sqlite":
            before = _completed_before(first)
            rows = store.query(_NODES_SQL["sqlite"], (before, _completed_before(stop)))
            if rows == completed[:_completed_before(stop) - before]:
                return
        for level, _, digest in completed:
            levels[level].append(digest)
        if store.dialect != "sqlite":
            wanted = [(level, hi - lo + 1, hi - lo + 1, lo, hi, b"".join(levels[level][:hi - lo + 1]))
                      for level, lo, hi in spans]
            rows = store.query(_NODES_SQL["postgresql"].format(
                spans=" OR ".join(["(level = ? AND idx BETWEEN ? AND ?)"] * len(spans))),
                [value for span in spans for value in span])
            if [tuple(row) for row in rows] == wanted:
                return
        for level, lo, hi in spans:
            found = nodes.read_span(store, level, lo, hi)
            for index, digest in enumerate(levels[level][:hi - lo + 1], lo):
                if found.get(index) != digest:
                    self._node = (level, index, index not in found)
                    return

    def _differs(self, index: int, row: tuple[Any, ...], notification: Any, chain_hash: str,
                 heads: dict[UUID, ChainHead], signed: bool) -> None:
        """The leaf record `row` at `index` names another event, notification or hash than the event stored
        there (`signed`: that event's own signature verified)."""
        self.divergence = index
        _, logged_notification, logged_id, logged_version, logged_hash = row
        head = heads[notification.originator_id]
        event = f"{head.label}, event {notification.originator_version}"
        same_event = logged_version == notification.originator_version and logged_id == head.id_text
        if same_event and logged_hash != chain_hash:
            unbound = "" if signed else (" (or the stored tree's record of it was altered: with neither a "
                                         "signature nor a checkpoint over the event, the two cannot be told apart)")
            self._pending = Finding("rewritten", f"{event}: rewritten after it was logged (logged hash "
                                    f"{str(logged_hash)[:12]}…, now {chain_hash[:12]}…){unbound}", head.id_text,
                                    head.label, logged_version), signed, True
            return
        if same_event:
            self._pending = Finding("reordered", f"{event} was logged as notification {logged_notification}; the "
                                    f"store holds it as notification {notification.id}: its row was renumbered, or "
                                    "the stored tree's record of it was altered", head.id_text, head.label,
                                    logged_version), False, False
            return
        try:
            logged_uuid: UUID | None = UUID(str(logged_id))
        except ValueError:  # the leaf record itself altered: named as it is stored
            logged_uuid = None
        logged = heads[logged_uuid].label if logged_uuid in heads else str(logged_id)[:80]
        if type(logged_notification) is int and notification.id > logged_notification:
            kind, message = "deleted", (f"leaf {index} was logged as event {logged_version} of {logged}, which the "
                                        "store no longer holds there: events were deleted from the store")
        elif type(logged_notification) is int and notification.id < logged_notification:
            kind, message = "inserted", (f"{event} (notification {notification.id}) was inserted among events "
                                         "already logged")
        else:
            kind, message = "reordered", (f"leaf {index} was logged as event {logged_version} of {logged}; "
                                          f"the store now holds {event} there: the events were renumbered or "
                                          "reordered")
        self._pending = Finding(kind, message, head.id_text, head.label, notification.originator_version), False, True

    def judge(self, verdict: Verdict) -> None:
        """The differences found, once the pass knows how far a matching checkpoint binds the events."""
        for size, finding in self.unmatched:
            if self.divergence is not None and self.divergence < size:
                finding.message += f" (the first difference from the tree as logged is at leaf {self.divergence})"
        if self._missing is not None:
            self.records_altered = True
            verdict.add(Finding("tree", f"the stored tree has no record of leaf {self._missing} (its leaf records were "
                                "deleted or renumbered): proofs and new checkpoints cannot be made from it"))
        if self._pending is not None:
            finding, signed, checkpointed = self._pending
            bound = checkpointed and self.divergence < verdict.covered  # type: ignore[operator]
            if bound or signed:
                self.records_altered = True
                binds = "the checkpoint over it" if bound else "its own signature"
                verdict.add(Finding("tree", f"the stored tree's record of leaf {self.divergence} was altered: it "
                                    f"no longer names the event stored there ({finding.label}, event "
                                    f"{finding.version}), which {binds} shows unchanged: proofs and new "
                                    "checkpoints cannot be made from it"))
            else:
                verdict.add(finding)
        if self._node is not None:
            level, index, missing = self._node
            last_leaf = ((index + 1) << level) - 1
            what = "is missing, or holds no 32-byte hash" if missing else "is not the hash of the events under it"
            whose = ("the events under it are as the checkpoint over them binds them, so the node was altered"
                     if last_leaf < verdict.covered else
                     "the node was altered, or those events and their leaf records were after they were logged")
            verdict.add(Finding("tree", f"the stored tree's node ({level}, {index}) {what} (leaves "
                                f"{index << level}..{last_leaf}): {whose}; proofs that take it would fail"))

    def summarise(self, heads: dict[UUID, ChainHead], verdict: Verdict, labels: dict[str, str]) -> None:
        """Aggregates, or last events, the tree logged and the store no longer holds (not once a leaf record was
        found altered: what the records say is then no account of what was deleted)."""
        if self.log is None or self.records_altered:
            return
        if self.matched == self.size and self.log.store.query("SELECT COUNT(*) FROM audit_leaves")[0][0] == self.size:
            # Every leaf record is one of the events read (its id, integer version and hash), and no other record
            # is stored (the key keeps them unique): each logged aggregate is a chain read, its last logged event
            # no later than its highest stored one, so the query below would find nothing.
            return
        rows = self.log.store.query("SELECT originator_id, MAX(originator_version), COUNT(*) FROM audit_leaves "
                                    "GROUP BY originator_id")
        for originator_id, logged_version, count in rows:
            try:
                aggregate_id, logged_version = UUID(str(originator_id)), int(logged_version)
            except (TypeError, ValueError):
                verdict.add(Finding("tree", f"the stored tree's leaf records were altered: {str(originator_id)[:80]!r} "
                                    f"event {str(logged_version)[:40]!r} names no event: proofs and new checkpoints "
                                    "cannot be made from it"))
                continue
            head = heads.get(aggregate_id)
            label = labels.get(originator_id) or (head.label if head else originator_id)
            if head is None:
                verdict.add(Finding("deleted", f"{label}: all of its {count} logged events were deleted from the "
                                    "store", originator_id, label))
            elif logged_version > head.highest:
                verdict.add(Finding("deleted", f"{label}: its events {head.highest + 1}..{logged_version} were "
                                    f"logged and are no longer stored (its last events were deleted; the store "
                                    f"ends at event {head.highest})", originator_id, label, head.highest + 1))
