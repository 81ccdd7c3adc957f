"""Full verification of a store: every chain, the Merkle tree rebuilt from the events against every checkpoint,
the checkpoints' signatures, the events' signatures; and the check of a receipt.

One pass over the notification log in order (the log's leaf order):
- each event decodes, its hash matches its content, its `prev_hash` the previous event of its aggregate, and
  its version follows that event's (`domain/chain.py`);
- its leaf entry is appended to a tree rebuilt in memory; at each checkpoint's size the rebuilt root must be the
  signed one (a deletion, rewrite, insertion or reordering anywhere before it changes the root);
- its signature is checked when the event is not covered by a verified checkpoint (a checkpoint's signature binds
  every event under it; `all_signatures` checks the others too); a covered event's signature is checked for its
  form (garbage or another key's signature is found; a valid signature copied from another event only by
  `all_signatures`); once an event is signed, every later one must be (a covered one too: its signature was
  removed), and once a checkpoint exists, an event left uncovered must be signed;
- the stored tree (a cache) is compared with the events, its leaf records and every node a batch at a time
  (`audit/stored_tree.py`), which names what was deleted or rewritten, and whether that was an event or the
  cache; and a stored checkpoint's row must say what its signed note says.
Checkpoints come from the store, from the witnesses' folders and from files the auditor kept; they are trusted only
through the verifier key given from outside (never a key read from the database).
"""

from __future__ import annotations

import gc
import hashlib
from collections.abc import Iterable
from typing import Any
from uuid import UUID

from audit import merkle
from audit.log import AuditLog, b64
from audit.notes import (
    NoteError, Verifier, entry_after_id, event_signature_in_form, open_checkpoint, verify_event_signature,
)
from audit.reading import StoredRead, read_stored, recipe_fields, topic_problem
from audit.receipts import open_receipt
from audit.stored_tree import Batch, StoredTreeCheck, check_stored_tree
from audit.verdict import ChainHead, CheckpointCheck, Finding, Verdict
from domain import chain

READ_BATCH = 2000


class StoreEmptyError(Exception):
    """There is nothing to verify: the store holds no event."""


def gather_checkpoints(log: AuditLog | None, external: Iterable[tuple[str, str]], verifier: Verifier | None,
                       verdict: Verdict) -> dict[int, bytes]:
    """Every checkpoint known (stored, and `external` (source, note) pairs), judged: {size: signed root} of
    those that verify, with a finding for each forged one, each fork, and each external one the store lacks."""
    stored = [(f"stored (signed {c.signed_at})", c.note, c.signed_at, c) for c in (log.checkpoints() if log else [])]
    candidates = stored + [(source, note, None, None) for source, note in external]
    if candidates and verifier is None:
        verdict.add(Finding("checkpoint", "no verifier key was given (--key, TRAMITA_VERIFIER_KEY or "
                            "TRAMITA_SIGNING_KEY): the checkpoints' and events' signatures cannot be checked"))
        return {}
    roots: dict[int, bytes] = {}
    stored_sizes: dict[int, bytes] = {}
    for source, note, signed_at, stored_row in candidates:
        try:
            checkpoint = open_checkpoint(note, verifier)  # type: ignore[arg-type]
        except NoteError as error:
            verdict.checkpoints.append(CheckpointCheck(-1, source, signed_at, False))
            verdict.add(Finding("checkpoint", f"a checkpoint ({source}) does not verify with the key "
                                f"{verifier}: forged or altered ({error})"))
            continue
        verdict.checkpoints.append(CheckpointCheck(checkpoint.size, source, signed_at, True))
        if stored_row is not None and (stored_row.size, stored_row.root) != (checkpoint.size, b64(checkpoint.root)):
            verdict.add(Finding("checkpoint", f"the stored checkpoint of size {checkpoint.size} ({source}) was "
                                f"altered: its row says size {stored_row.size}, root {str(stored_row.root)[:60]!r}, "
                                "which its signed note does not: what the API and the case file show of it is wrong"))
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
        if log is None:
            return _verify(app, None, verifier, external, all_signatures, labels)
        with log.read_leniently() as reading:
            return _verify(app, reading, verifier, external, all_signatures, labels)
    finally:
        if collecting:
            gc.enable()


def _verify(app: Any, log: AuditLog | None, verifier: Verifier | None, external: list[tuple[str, str]],
            all_signatures: bool, labels: dict[str, str] | None) -> Verdict:
    verdict = _verify_pass(app, log, verifier, external, all_signatures, labels)
    if all_signatures or not any(c.matches is False for c in verdict.checkpoints):
        return verdict
    # A checkpoint no longer binds the events under it: their own signatures are what is left to judge them.
    verdict = _verify_pass(app, log, verifier, external, True, labels)
    verdict.warnings.append("a checkpoint did not match, so every event's signature was checked")
    return verdict


def _verify_pass(app: Any, log: AuditLog | None, verifier: Verifier | None, external: list[tuple[str, str]],
                 all_signatures: bool, labels: dict[str, str] | None) -> Verdict:
    """One pass over the log, each event also compared with the stored tree's leaf record and nodes."""
    verdict = Verdict()
    roots = gather_checkpoints(log, external, verifier, verdict)
    return _pass_over_log(app, verifier, all_signatures, labels, verdict, roots, StoredTreeCheck(log))


def _pass_over_log(app: Any, verifier: Verifier | None, all_signatures: bool, labels: dict[str, str] | None,
                   verdict: Verdict, roots: dict[int, bytes], tree: StoredTreeCheck) -> Verdict:
    coverage = max(roots, default=0)
    heads: dict[UUID, ChainHead] = {}
    chains: dict[int, tuple[ChainHead, bytes]] = {}
    """`heads` by the ids' integers, which hash and compare without a Python call per event (the same heads),
    each with what its leaves' hash input begins with: 0x00 ‖ the id's 16 bytes (RFC 9162 §2.1.1, `entry_of`)."""
    chains_get = chains.get
    frontier = merkle.Frontier()
    push, append, sha256 = frontier.push, frontier.append, hashlib.sha256
    known_labels = labels or {}
    plain = not (app.mapper.cipher or app.mapper.compressor)  # the stored JSON is readable as it is stored
    known_topics: dict[str, str] = {}
    """The topics `topic_problem` found naming their event class, each with its event type (the topic's tail)."""
    signing_began = bool(roots)
    signed_before = False
    """An event before this one in the log was signed: from then on every event is (the signer's rule too)."""
    signed_events = in_form = 0
    start = 0
    while True:
        notifications = app.recorder.select_notifications(start, READ_BATCH, inclusive_of_start=False)
        if not notifications:
            break
        start = notifications[-1].id
        first = frontier.size
        comparing = tree.comparing(first)
        batch = Batch(first) if comparing else None  # the leaf records and nodes the stored tree should hold
        if batch is not None:
            add_hash, add_id = batch.hashes.append, batch.ids.append
            add_version, add_notification, completed = batch.versions.append, batch.notifications.append, batch.nodes
        verified: set[int] = set()  # the leaves whose event's own signature verified
        for notification in notifications:
            index = frontier.size
            aggregate_id, version, topic = notification.originator_id, notification.originator_version, \
                notification.topic
            chained = chains_get(aggregate_id.int)
            head, framed = chained if chained is not None else (None, b"")
            event_type = known_topics.get(topic) if plain and head is not None else None
            fields = None
            if event_type is not None and type(version) is int and version - 1 == head.version:  # type: ignore
                fields = recipe_fields(notification.state, event_type, head.id_text, version)  # type: ignore
            if fields is not None and fields[1] == head.hash and fields[3] is None:  # type: ignore[union-attr]
                # Fast path: the next link of a chain already begun, its content giving its hash, its topic one
                # known to name its class: what `_check_chain` finds of it (no problem), without its StoredRead.
                chain_hash, signature, decodes = fields[0], fields[2], True
                head.events += 1  # type: ignore[union-attr]
                head.moved_to(version, chain_hash)  # type: ignore[union-attr]
            else:
                read, head = _check_chain(app, notification, heads, verdict, known_labels)
                chain_hash, signature, decodes, event_type = read.hash, read.signature, read.decodes, read.event_type
                if chained is None:
                    framed = b"\x00" + aggregate_id.bytes
                    chains[aggregate_id.int] = head, framed
                if plain and type(topic) is str and topic not in known_topics and topic_problem(topic, None) is None:
                    known_topics[topic] = topic.rpartition(":")[2]
            framed += entry_after_id(version, chain_hash)  # the leaf entry `entry_of` writes, after 0x00
            if signature is not None:
                signed_events += 1
                signing_began = signed_before = True
                if index >= coverage or all_signatures:
                    verdict.signatures_checked += 1
                    if verifier is not None and verify_event_signature(verifier, framed[1:], signature):
                        verified.add(index)
                    else:
                        _signature_finding(verdict, head, notification, "its signature does not verify with the "
                                           "log's key (forged or altered)")
                else:
                    in_form += 1
                    if not event_signature_in_form(verifier, signature):
                        _signature_finding(verdict, head, notification, "its signature is not one the log's key "
                                           "makes (altered; the checkpoint over it still binds its content)")
            elif index < coverage and not signed_before:
                verdict.unsigned_covered += decodes  # an event that no longer decodes is an ALTERED finding
            elif signing_began:
                why = ("although the events before it were signed: its signature was removed (the checkpoint "
                       "over it still binds its content)" if index < coverage else
                       "although signing had begun and no checkpoint covers it: forged (appended behind the "
                       "application's back) or recorded by a process without the key")
                verdict.add(Finding("unsigned", f"{head.label}, event {version} ({event_type}) carries no "
                                    f"signature {why}", head.id_text, head.label, version))
            leaf = sha256(framed).digest()  # the leaf hash of the entry `framed[1:]`, RFC 9162 §2.1.1
            if batch is not None:
                add_hash(chain_hash)
                add_id(head.id_text)  # type: ignore[union-attr]
                add_version(version)
                add_notification(notification.id)
                completed += append(leaf)
            else:
                push(leaf)
            root = roots.get(frontier.size)
            if root is not None:
                _judge_root(frontier, root, verdict, tree)
        if batch is not None:
            tree.compare_batch(batch, notifications, heads, verified)
    verdict.signed_events += signed_events
    verdict.signatures_in_form += in_form
    verdict.events = frontier.size
    verdict.aggregates = len(heads)
    verdict.altered_chains = sum(1 for head in heads.values() if head.broken)
    for size in sorted(s for s in roots if s > frontier.size):
        verdict.add(Finding("deleted", f"the checkpoint of size {size} was signed over {size} events but the store "
                            f"holds {frontier.size}: at least {size - frontier.size} events were deleted"))
    verdict.covered = max((s for s in roots if s <= frontier.size and
                           any(c.size == s and c.matches for c in verdict.checkpoints)), default=0)
    tree.judge(verdict)
    tree.summarise(heads, verdict, labels or {})
    if tree.log is not None:
        check_stored_tree(tree.log, {size: roots[size] for size in roots if size <= verdict.covered}, verdict)
    if not roots:
        verdict.warnings.append("no checkpoint verifies this store: the deletion of its latest events cannot be "
                                "detected; sign checkpoints (`tramita checkpoint`) and keep them outside")
    return verdict


def _signature_finding(verdict: Verdict, head: ChainHead, notification: Any, problem: str) -> None:
    verdict.add(Finding("forged", f"{head.label}, event {notification.originator_version}: {problem}", head.id_text,
                        head.label, notification.originator_version))


def _check_chain(app: Any, notification: Any, heads: dict[UUID, ChainHead], verdict: Verdict,
                 labels: dict[str, str]) -> tuple[StoredRead, ChainHead]:
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
        problem = (f"it follows event {previous_version}: events {previous_version + 1}..{version - 1} are not "
                   "before it in the log (deleted, or moved after it)" if version > previous_version + 1 else
                   f"its version repeats or goes back (after {previous_version})")
    elif read.prev_hash != previous_hash:
        problem = "prev_hash does not match the previous event's hash: an event before it was deleted or replaced"
    elif not read.content_ok:
        problem = "content altered: its content does not match its hash"
    if head is None:
        head = heads[aggregate_id] = ChainHead(version, read.hash, label, str(aggregate_id), events=0)
    head.events += 1
    if problem and not head.broken:
        head.broken = True
        verdict.add(Finding("altered", problem, str(aggregate_id), label, version, read.event_type, head.events))
    head.moved_to(version, read.hash)
    return read, head


def _judge_root(frontier: merkle.Frontier, root: bytes, verdict: Verdict, tree: StoredTreeCheck) -> None:
    matches = frontier.root() == root
    for check in verdict.checkpoints:
        if check.size == frontier.size and check.verified:
            check.matches = matches
    if not matches:
        finding = Finding("checkpoint", f"the events no longer give the root signed by the checkpoint of size "
                          f"{frontier.size}: events before it were deleted, rewritten, inserted or reordered")
        verdict.add(finding)
        tree.unmatched.append((frontier.size, finding))


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
    elif chain.recomputed_hash(event) != event.hash:
        problems.append(f"TAMPERED: {what} was altered: its content no longer matches its hash")
    if event.timestamp != receipt.recorded_at:
        problems.append(f"TAMPERED: {what} was recorded at {receipt.recorded_at.isoformat()} by the receipt, "
                        f"{event.timestamp.isoformat()} by the store")
    return problems
