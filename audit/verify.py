"""Full verification of a store: every chain, the Merkle tree rebuilt from the events against every checkpoint,
the checkpoints' signatures, the events' signatures; and the check of a receipt.

One pass over the notification log in order (the log's leaf order):
- each event decodes, its hash matches its content, its `prev_hash` the previous event of its aggregate, and
  its version follows that event's (`domain/chain.py`);
- its leaf entry is appended to a tree rebuilt in memory; at each checkpoint's size the rebuilt root must be the
  signed one (a deletion, rewrite, insertion or reordering anywhere before it changes the root);
- its signature is checked when the event is not covered by a verified checkpoint (a checkpoint's signature binds
  every event under it; `all_signatures` checks the others too); once an event is signed, or once a checkpoint
  exists, an event left uncovered must be signed;
- the stored tree (a cache) is compared with the events, which names what was deleted or rewritten.
Checkpoints come from the store, from the witnesses' folders and from files the auditor kept; they are trusted only
through the verifier key given from outside (never a key read from the database).
"""

from __future__ import annotations

import gc
import hashlib
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any
from uuid import UUID

from audit import merkle
from audit.log import AuditLog, TreeDamaged
from audit.notes import NoteError, Verifier, entry_of, open_checkpoint, verify_event_signature
from audit.reading import StoredRead, read_stored
from audit.receipts import open_receipt
from domain import chain

READ_BATCH = 2000
#: Findings listed per kind before the rest are only counted.
MAX_FINDINGS_PER_KIND = 25


class StoreEmptyError(Exception):
    """There is nothing to verify: the store holds no event."""


@dataclass
class Finding:
    kind: str
    """altered, deleted, inserted, rewritten, reordered, forged, unsigned, checkpoint, fork, tree."""
    message: str
    aggregate_id: str | None = None
    label: str | None = None
    version: int | None = None
    event_type: str | None = None
    events: int | None = None
    """For a chain found altered: the events of its aggregate read up to the first that does not match."""

    def as_dict(self) -> dict[str, Any]:
        return dict(vars(self))


@dataclass
class CheckpointCheck:
    size: int
    source: str
    signed_at: str | None
    verified: bool
    matches: bool | None = None
    """The rebuilt tree's root at its size is the signed one (None: not reached)."""

    def as_dict(self) -> dict[str, Any]:
        return dict(vars(self))


@dataclass
class Verdict:
    events: int = 0
    aggregates: int = 0
    altered_chains: int = 0
    signed_events: int = 0
    unsigned_covered: int = 0
    """Events without a signature (recorded before the key existed) that a verified checkpoint covers instead."""
    signatures_checked: int = 0
    covered: int = 0
    """The size of the largest checkpoint verified against the rebuilt tree (0: none)."""
    checkpoints: list[CheckpointCheck] = field(default_factory=list)
    findings: list[Finding] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    more_findings: int = 0

    @property
    def not_yet_covered(self) -> int:
        return self.events - self.covered

    @property
    def ok(self) -> bool:
        return not self.findings and not self.more_findings

    def add(self, finding: Finding) -> None:
        if sum(1 for f in self.findings if f.kind == finding.kind) >= MAX_FINDINGS_PER_KIND:
            self.more_findings += 1
        else:
            self.findings.append(finding)

    def as_dict(self) -> dict[str, Any]:
        return {"ok": self.ok, "events": self.events, "aggregates": self.aggregates,
                "altered_chains": self.altered_chains, "signed_events": self.signed_events,
                "unsigned_covered": self.unsigned_covered,
                "signatures_checked": self.signatures_checked, "covered": self.covered,
                "not_yet_covered": self.not_yet_covered, "checkpoints": [c.as_dict() for c in self.checkpoints],
                "findings": [f.as_dict() for f in self.findings], "more_findings": self.more_findings,
                "warnings": self.warnings}


@dataclass(slots=True)
class _Head:
    version: int
    hash: str
    label: str
    events: int = 1
    broken: bool = False
    highest: int = 0
    """The highest version stored (the last one read is not it when events were reordered or one was inserted
    with a lower version)."""


def gather_checkpoints(log: AuditLog | None, external: Iterable[tuple[str, str]], verifier: Verifier | None,
                       verdict: Verdict) -> dict[int, bytes]:
    """Every checkpoint known (stored, and `external` (source, note) pairs), judged: {size: signed root} of
    those that verify, with a finding for each forged one, each fork, and each external one the store lacks."""
    stored = [(f"stored (signed {c.signed_at})", c.note, c.signed_at) for c in (log.checkpoints() if log else [])]
    candidates = stored + [(source, note, None) for source, note in external]
    if candidates and verifier is None:
        verdict.add(Finding("checkpoint", "no verifier key was given (--key, TRAMITA_VERIFIER_KEY or "
                            "TRAMITA_SIGNING_KEY): the checkpoints' and events' signatures cannot be checked"))
        return {}
    roots: dict[int, bytes] = {}
    stored_sizes: dict[int, bytes] = {}
    for source, note, signed_at in candidates:
        try:
            checkpoint = open_checkpoint(note, verifier)  # type: ignore[arg-type]
        except NoteError as error:
            verdict.checkpoints.append(CheckpointCheck(-1, source, signed_at, False))
            verdict.add(Finding("checkpoint", f"a checkpoint ({source}) does not verify with the key "
                                f"{verifier}: forged or altered ({error})"))
            continue
        verdict.checkpoints.append(CheckpointCheck(checkpoint.size, source, signed_at, True))
        if source.startswith("stored"):
            stored_sizes[checkpoint.size] = checkpoint.root
        elif checkpoint.size not in stored_sizes and log is not None:
            verdict.add(Finding("checkpoint", f"the checkpoint of size {checkpoint.size} held {source} is missing "
                                "from the store: stored checkpoints were deleted or rewritten"))
        if checkpoint.size in roots and roots[checkpoint.size] != checkpoint.root:
            verdict.add(Finding("fork", f"two checkpoints of size {checkpoint.size} sign different roots: the log "
                                "was rewritten and signed again"))
        roots.setdefault(checkpoint.size, checkpoint.root)
    return roots


def verify_store(app: Any, log: AuditLog | None, verifier: Verifier | None, *,
                 external: Iterable[tuple[str, str]] = (), all_signatures: bool = False,
                 labels: dict[str, str] | None = None) -> Verdict:
    """Verify everything the store holds (see the module's docstring); StoreEmptyError when it holds nothing."""
    if not app.recorder.max_notification_id():
        raise StoreEmptyError("the store holds no event: nothing to verify (is TRAMITA_DATABASE_URL the right one?)")
    external = list(external)
    collecting = gc.isenabled()
    gc.disable()  # the pass keeps one small record per aggregate and makes no cycles: no collector pauses over them
    try:
        return _verify(app, log, verifier, external, all_signatures, labels)
    finally:
        if collecting:
            gc.enable()


def _verify(app: Any, log: AuditLog | None, verifier: Verifier | None, external: list[tuple[str, str]],
            all_signatures: bool, labels: dict[str, str] | None) -> Verdict:
    verdict = _verify_pass(app, log, verifier, external, all_signatures, labels, locate=False)
    if verdict.ok:
        return verdict
    # Something was found: read again, comparing each event with the tree as it was logged, to name what was
    # deleted, rewritten or inserted; and when a checkpoint no longer binds the events under it, their own
    # signatures are what is left to judge them.
    mismatch = any(c.matches is False for c in verdict.checkpoints)
    verdict = _verify_pass(app, log, verifier, external, all_signatures or mismatch, labels, locate=True)
    if mismatch and not all_signatures:
        verdict.warnings.append("a checkpoint did not match, so every event's signature was checked")
    return verdict


def _verify_pass(app: Any, log: AuditLog | None, verifier: Verifier | None, external: list[tuple[str, str]],
                 all_signatures: bool, labels: dict[str, str] | None, *, locate: bool) -> Verdict:
    """One pass over the log; with `locate`, each event is also compared with the stored tree's leaf records."""
    verdict = Verdict()
    roots = gather_checkpoints(log, external, verifier, verdict)
    coverage = max(roots, default=0)
    cache = _CacheReader(log if locate else None)
    summary = _CacheReader(log)
    heads: dict[UUID, _Head] = {}
    frontier = merkle.Frontier()
    push, sha256 = frontier.push, hashlib.sha256
    known_labels = labels or {}
    signing_began = bool(roots)
    start = 0
    while True:
        notifications = app.recorder.select_notifications(start, READ_BATCH, inclusive_of_start=False)
        if not notifications:
            break
        start = notifications[-1].id
        for notification in notifications:
            index = frontier.size
            read = _check_chain(app, notification, heads, verdict, known_labels)
            chain_hash = read.hash
            entry = entry_of(notification.originator_id, notification.originator_version, chain_hash)
            push(sha256(b"\x00" + entry).digest())  # the leaf hash, RFC 9162 §2.1.1
            if locate:
                cache.compare(index, notification, chain_hash, heads, verdict)
            root = roots.get(frontier.size)
            if root is not None:
                _judge_root(frontier, root, verdict, cache)
            signature = read.signature
            if signature is not None:
                verdict.signed_events += 1
                signing_began = True
                if index >= coverage or all_signatures:
                    verdict.signatures_checked += 1
                    if verifier is None or not verify_event_signature(verifier, entry, signature):
                        head = heads[notification.originator_id]
                        verdict.add(Finding("forged", f"{head.label}, event {notification.originator_version}: its "
                                            "signature does not verify with the log's key (forged or altered)",
                                            str(notification.originator_id), head.label,
                                            notification.originator_version))
            elif index < coverage:
                verdict.unsigned_covered += read.decodes  # an event that no longer decodes is an ALTERED finding
            elif signing_began:
                head = heads[notification.originator_id]
                verdict.add(Finding("unsigned", f"{head.label}, event {notification.originator_version} "
                                    f"({read.event_type}) carries no signature "
                                    "although signing had begun and no checkpoint covers it: forged (appended "
                                    "behind the application's back) or recorded by a process without the key",
                                    str(notification.originator_id), head.label, notification.originator_version))
    verdict.events = frontier.size
    verdict.aggregates = len(heads)
    verdict.altered_chains = sum(1 for head in heads.values() if head.broken)
    for size in sorted(s for s in roots if s > frontier.size):
        verdict.add(Finding("deleted", f"the checkpoint of size {size} was signed over {size} events but the store "
                            f"holds {frontier.size}: at least {size - frontier.size} events were deleted"))
    verdict.covered = max((s for s in roots if s <= frontier.size and
                           any(c.size == s and c.matches for c in verdict.checkpoints)), default=0)
    summary.summarise(heads, verdict, labels or {})
    if summary.log is not None:
        _check_stored_tree(summary.log, {size: roots[size] for size in roots if size <= verdict.covered}, verdict)
    if not roots:
        verdict.warnings.append("no checkpoint verifies this store: the deletion of its latest events cannot be "
                                "detected; sign checkpoints (`tramita checkpoint`) and keep them outside")
    return verdict


def _check_chain(app: Any, notification: Any, heads: dict[UUID, _Head], verdict: Verdict,
                 labels: dict[str, str]) -> StoredRead:
    """Read the event and check its link in its aggregate's chain (`labels`: case numbers from the read model,
    for a case whose first event no longer says its own)."""
    aggregate_id, version = notification.originator_id, notification.originator_version
    head = heads.get(aggregate_id)
    read = read_stored(app, notification)
    label = head.label if head else (str(read.name) if read.name else labels.get(str(aggregate_id)) or
                                     f"{read.event_type.split('.')[0]} {aggregate_id}")
    previous_version, previous_hash = (head.version, head.hash) if head else (0, chain.GENESIS)
    problem = None
    if not read.decodes:
        problem = "the stored event does not decode"
    elif version != previous_version + 1:
        problem = (f"it follows event {previous_version}: events {previous_version + 1}..{version - 1} were "
                   "deleted" if version > previous_version + 1 else f"its version repeats or goes back "
                   f"(after {previous_version})")
    elif read.prev_hash != previous_hash:
        problem = "prev_hash does not match the previous event's hash: an event before it was deleted or replaced"
    elif not read.content_ok:
        problem = "content altered: its content does not match its hash"
    if head is None:
        head = heads[aggregate_id] = _Head(version, read.hash, label, events=0)
    head.events += 1
    if problem and not head.broken:
        head.broken = True
        verdict.add(Finding("altered", problem, str(aggregate_id), label, version, read.event_type, head.events))
    head.version, head.hash = version, read.hash
    if type(version) is int and version > head.highest:
        head.highest = version
    return read


def _check_stored_tree(log: AuditLog, signed: dict[int, bytes], verdict: Verdict) -> None:
    """The stored tree (the cache proofs and new checkpoints are made from) against what was rebuilt: its state
    agrees with its leaf records, and its root at each checkpoint the events match is the signed one."""
    try:
        size, _ = log.state()
    except TreeDamaged as damaged:
        verdict.add(Finding("tree", f"the stored tree was altered: {damaged}: proofs and new checkpoints cannot be "
                            "made from it"))
        return
    count, top = log.store.query("SELECT COUNT(*), MAX(leaf_index) FROM audit_leaves")[0]
    if int(count) != size or (count and int(top) != size - 1):
        verdict.add(Finding("tree", f"the stored tree was altered: its state says {size} leaves, {count} leaf records "
                            "are stored: proofs and new checkpoints cannot be made from it"))
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


def _judge_root(frontier: merkle.Frontier, root: bytes, verdict: Verdict, cache: _CacheReader) -> None:
    matches = frontier.root() == root
    for check in verdict.checkpoints:
        if check.size == frontier.size and check.verified:
            check.matches = matches
    if not matches:
        where = (f" (the first difference from the tree as logged is at leaf {cache.divergence})"
                 if cache.divergence is not None else "")
        verdict.add(Finding("checkpoint", f"the events no longer give the root signed by the checkpoint of size "
                            f"{frontier.size}: events before it were deleted, rewritten, inserted or "
                            f"reordered{where}"))


class _CacheReader:
    """The stored tree's leaf records, read alongside the events, to name what changed since it was logged."""

    def __init__(self, log: AuditLog | None) -> None:
        self.log = log if log is not None and log.exists() else None
        try:
            self.size = self.log.size if self.log else 0
        except TreeDamaged:  # its state altered: `_check_stored_tree` names it; no leaf record is compared
            self.size = 0
        self._buffer: list[Any] = []
        self._offset = 0
        self.divergence: int | None = None

    def _leaf(self, index: int) -> Any:
        """(leaf index, notification id, aggregate id text, version, event hash) of a logged leaf, or None."""
        if not self._offset <= index < self._offset + len(self._buffer):
            self._buffer = self.log.leaf_rows(index, index + READ_BATCH) if self.log else []
            self._offset = index
        position = index - self._offset
        return self._buffer[position] if position < len(self._buffer) else None

    def compare(self, index: int, notification: Any, chain_hash: str, heads: dict[UUID, _Head],
                verdict: Verdict) -> None:
        if self.divergence is not None or index >= self.size:
            return
        row = self._leaf(index)
        if row is None:
            return
        _, logged_notification, logged_id, logged_version, logged_hash = row
        same_event = logged_version == notification.originator_version and \
            logged_id == str(notification.originator_id)
        if same_event and logged_hash == chain_hash:
            return
        self.divergence = index
        head = heads[notification.originator_id]
        if same_event:
            verdict.add(Finding("rewritten", f"{head.label}, event {logged_version}: rewritten after it was "
                                f"logged (logged hash {logged_hash[:12]}…, now {chain_hash[:12]}…)",
                                logged_id, head.label, logged_version))
            return
        try:
            logged_uuid: UUID | None = UUID(str(logged_id))
        except ValueError:  # the leaf record itself altered: named as it is stored
            logged_uuid = None
        logged = heads[logged_uuid].label if logged_uuid in heads else str(logged_id)[:80]
        if notification.id > logged_notification:
            kind, message = "deleted", (f"leaf {index} was logged as event {logged_version} of {logged}, which the "
                                        "store no longer holds there: events were deleted from the store")
        elif notification.id < logged_notification:
            kind, message = "inserted", (f"{head.label}, event {notification.originator_version} (notification "
                                         f"{notification.id}) was inserted among events already logged")
        else:
            kind, message = "reordered", (f"leaf {index} was logged as event {logged_version} of {logged}; "
                                          f"the store now holds event {notification.originator_version} of "
                                          f"{head.label} there: the events were renumbered or reordered")
        verdict.add(Finding(kind, message, str(notification.originator_id), head.label,
                            notification.originator_version))

    def summarise(self, heads: dict[UUID, _Head], verdict: Verdict, labels: dict[str, str]) -> None:
        """Aggregates, or last events, the tree logged and the store no longer holds."""
        if self.log is None:
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


def verify_receipt(app: Any, note: str, verifier: Verifier) -> list[str]:
    """What is wrong with the stored event a receipt names (empty: it is stored as the receipt says)."""
    try:
        receipt = open_receipt(note, verifier)
    except NoteError as error:
        return [f"the receipt does not verify with the key {verifier}: {error}"]
    stored = list(app.recorder.select_events(receipt.aggregate_id, gt=receipt.version - 1, lte=receipt.version))
    what = f"event {receipt.version} of {receipt.aggregate_id}"
    if not stored:
        return [f"TAMPERED: the receipt proves {what} was recorded at {receipt.recorded_at.isoformat()}, and the "
                "store no longer holds it (deleted)"]
    try:
        event = app.mapper.to_domain_event(stored[0])
    except Exception as error:  # the stored bytes no longer decode
        return [f"TAMPERED: {what} no longer decodes ({error})"]
    problems = []
    if event.hash != receipt.hash:
        problems.append(f"TAMPERED: {what} was rewritten: the receipt holds hash {receipt.hash[:16]}…, the store "
                        f"{str(event.hash)[:16]}…")
    elif chain.hash_of(event) != event.hash:
        problems.append(f"TAMPERED: {what} was altered: its content no longer matches its hash")
    if event.timestamp != receipt.recorded_at:
        problems.append(f"TAMPERED: {what} was recorded at {receipt.recorded_at.isoformat()} by the receipt, "
                        f"{event.timestamp.isoformat()} by the store")
    return problems
