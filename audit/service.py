"""The audit service: what the API, the CLI and the scheduler ask of the audit record, each in one call.

It holds the application, the stored tree (`AuditLog`), the deployment's signer (None: nothing can be signed)
and the verifier key verification trusts (given from outside; None: signatures cannot be checked).
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any
from uuid import UUID

from audit import merkle
from audit.depends import dependency_findings
from audit.dossier import DeadlinesOf, gather
from audit.log import AuditLog, Signed, StoredCheckpoint, TamperAlarm, TreeDamaged, b64
from audit.notes import NoteError, Signer, Verifier, entry_of, open_checkpoint, verify_event_signature
from audit.receipts import ActReceipt, case_head_text, sign_receipt
from audit.verdict import Finding, Verdict
from audit.verify import verify_receipt, verify_store
from audit.witness import Witness, WitnessError
from audit.witness_cosign import CosigningWitness, collect, cosigned
from domain import chain
from domain.acts import Actor
from domain.case import Case
from domain.errors import CaseNotFoundError, InvalidActError

#: Who records the audit log's own alerts (the system's role).
AUDIT_ACTOR = Actor("tramita-audit", "scheduler")
#: Characters of the findings a tamper alert carries (the verdict of `tramita verify` has them all).
MAX_ALERT_MESSAGE = 4000


class NotSignedError(Exception):
    """The log has no checkpoint (of that size), or this process has no signing key."""


@dataclass
class Audit:
    app: Any
    log: AuditLog
    signer: Signer | None = None
    verifier: Verifier | None = None
    witnesses: list[Witness] = field(default_factory=list)

    # ------------------------------------------------------------------ keys and checkpoints

    @property
    def verifier_key(self) -> str:
        key = self.signer.verifier if self.signer else self.verifier
        if key is None:
            raise NotSignedError("this deployment has no signing key (TRAMITA_SIGNING_KEY)")
        return str(key)

    def latest_checkpoint(self) -> StoredCheckpoint:
        found = self.log.checkpoint()
        if found is None:
            raise NotSignedError("no checkpoint has been signed yet")
        return cosigned(self.log.store, _with_note(found))

    def checkpoint(self, size: int) -> StoredCheckpoint:
        found = self.log.checkpoint(size)
        if found is None:
            raise NotSignedError(f"no checkpoint of size {size} was signed")
        return cosigned(self.log.store, _with_note(found))

    def sign_checkpoint(self, log_line: Callable[..., None] | None = None) -> Signed:
        """Catch up the tree, sign it unless it contradicts a checkpoint signed before (TamperAlarm), and hand
        every checkpoint a witness has not received yet to it; a cosigning witness's refusal is a TamperAlarm."""
        if self.signer is None:
            raise NotSignedError("no signing key: set TRAMITA_SIGNING_KEY (make one with `tramita keys init`)")
        known = [note for witness in self.witnesses for _, note in witness.held()]
        now = self.app.clock()
        try:
            signed = self.log.sign_checkpoint(self.signer, signed_at=now, legal_date=self.app.today(), known=known)
        except TamperAlarm as alarm:
            self.raise_tamper_alert(alarm)
            raise
        refusals: list[str] = []
        self.deliver_to_witnesses(log_line, refusals)
        if refusals:
            self.raise_tamper_alert(TamperAlarm(refusals, by_witnesses=True))
            raise TamperAlarm(refusals, by_witnesses=True)
        return signed

    def raise_tamper_alert(self, alarm: TamperAlarm) -> None:
        """The loudest alarm: a system alert (kind `tamper-alarm`) that the scheduler logs and sends to the
        webhook; the same findings, refused again at each run, are the same alert, recorded once."""
        text = "\n".join(alarm.findings)
        digest = hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]
        said = ("the cosigning witnesses refused the checkpoint the log signed: " if alarm.by_witnesses
                else "the audit log refuses to sign a checkpoint: ")
        message = said + "; ".join(alarm.findings)
        self.app.raise_system_alert(AUDIT_ACTOR, kind="tamper-alarm", subject=f"audit-log:{digest}",
                                    message=message[:MAX_ALERT_MESSAGE])

    def deliver_to_witnesses(self, log_line: Callable[..., None] | None = None,
                             refusals: list[str] | None = None) -> int:
        """Hand each witness the checkpoints it has not received; return how many were delivered. A cosigning
        witness's refusals are added to `refusals` (audit/witness_cosign.py)."""
        delivered = 0
        verifier = self.signer.verifier if self.signer else self.verifier
        for witness in self.witnesses:
            if isinstance(witness, CosigningWitness):
                count, refused = collect(self.log, witness, self.app.clock, log_line)
                delivered += count
                (refusals if refusals is not None else []).extend(refused)
                continue
            for checkpoint in self.log.unwitnessed(witness.name):
                try:  # a stored note altered since it was signed is never handed over as the log's
                    open_checkpoint(checkpoint.note, verifier)  # type: ignore[arg-type]
                except NoteError as error:
                    if log_line:
                        log_line("witness-refused", witness=witness.name, size=checkpoint.size, error=str(error))
                    break
                try:
                    witness.deliver(checkpoint.size, checkpoint.note)
                except WitnessError as error:
                    if log_line:
                        log_line("witness-failed", witness=witness.name, size=checkpoint.size, error=str(error))
                    break
                self.log.record_witnessed(checkpoint.size, witness.name, self.app.clock())
                delivered += 1
                if log_line:
                    log_line("witnessed", witness=witness.name, size=checkpoint.size)
        return delivered

    # ------------------------------------------------------------------ receipts

    def receipt(self, acted: Any) -> dict[str, Any] | None:
        """The signed receipt of an act: its aggregate's last stored event (None without a signing key)."""
        if self.signer is None:
            return None
        if acted.hash is None or acted.notification_id is None:  # a replayed retry: read the event back
            event = self._event(acted.case_id, acted.version)
            acted.hash, acted.recorded_at = event.hash, event.timestamp
            leaf = self.log.leaf_of(acted.case_id, acted.version)
            acted.notification_id = leaf.notification_id if leaf else self._notification_id(acted.case_id,
                                                                                              acted.version)
        receipt = ActReceipt(self.signer.name, acted.case_id, acted.version, acted.hash, acted.notification_id,
                             acted.recorded_at)
        return {**receipt.as_dict(), "note": sign_receipt(self.signer, receipt)}

    def check_receipt(self, note: str) -> list[str]:
        if self.verifier is None:
            raise NotSignedError("no verifier key: give --key, or set TRAMITA_VERIFIER_KEY or TRAMITA_SIGNING_KEY")
        return verify_receipt(self.app, note, self.verifier)

    def _event(self, aggregate_id: UUID, version: int) -> Any:
        events = list(self.app.events.get(aggregate_id, gt=version - 1, lte=version))
        if not events:
            raise CaseNotFoundError(aggregate_id, CaseNotFoundError.EVENT_NOT_STORED, version=version)
        return events[0]

    def _notification_id(self, aggregate_id: UUID, version: int) -> int:
        """The notification id of an event the tree has not reached yet: read from the log after its position."""
        start = self.log.state()[1]
        while notifications := self.app.recorder.select_notifications(start, 1000, inclusive_of_start=False):
            for n in notifications:
                if n.originator_id == aggregate_id and n.originator_version == version:
                    return n.id
            start = notifications[-1].id
        raise CaseNotFoundError(aggregate_id, CaseNotFoundError.EVENT_NOT_IN_LOG, version=version)

    # ------------------------------------------------------------------ proofs

    def consistency(self, first: int, second: int) -> dict[str, Any]:
        try:
            proof = self.log.consistency(first, second)
        except merkle.ProofError as error:
            if isinstance(error, TreeDamaged) or first <= second <= self.log.size:
                raise  # the stored tree is damaged, not the request: 500 audit-tree-damaged
            raise InvalidActError("to" if second > self.log.size else "from", str(error)) from None
        return {"from": first, "to": second, "hashes": [b64(h) for h in proof],
                "from_checkpoint": _note(self.log.checkpoint(first)),
                "to_checkpoint": _note(self.log.checkpoint(second))}

    def inclusion(self, case_ref: str | UUID, version: int, size: int | None) -> dict[str, Any]:
        """The inclusion proof of a case's event in the tree of `size` (default: the latest checkpoint's)."""
        case_id = self.app.resolve_case(case_ref)
        events = self.app.events_of(case_ref)
        if not 1 <= version <= len(events):
            raise CaseNotFoundError(case_ref, CaseNotFoundError.NO_SUCH_EVENT, events=len(events), version=version)
        event = events[version - 1]
        if size is None:
            size = self.latest_checkpoint().size
        leaf = self.log.leaf_of(case_id, version)
        if leaf is None or leaf.index >= size:
            raise InvalidActError("size", f"event {version} is not in the tree of size {size} (it is not yet "
                                  "covered: ask for a larger size after the next checkpoint)")
        try:
            path = self.log.inclusion(leaf.index, size)
        except merkle.ProofError as error:
            if isinstance(error, TreeDamaged) or size <= self.log.size:
                raise  # the stored tree is damaged, not the request: 500 audit-tree-damaged
            raise InvalidActError("size", str(error)) from None
        entry = entry_of(case_id, version, event.hash)
        return {"case_id": str(case_id), "version": version, "hash": event.hash, "leaf_index": leaf.index,
                "tree_size": size, "entry": b64(entry), "leaf_hash": b64(merkle.leaf_hash(entry)),
                "hashes": [b64(h) for h in path], "checkpoint": _note(self.log.checkpoint(size))}

    # ------------------------------------------------------------------ exports

    def export_lines(self, case_ref: str | UUID) -> Iterator[dict[str, Any]]:
        """The case file for offline checking: each event's canonical document with `hash`, `signature` and its
        inclusion `proof` in the latest checkpoint's tree (null when it is not yet covered), then the closing
        line with that checkpoint and the signed case head."""
        case_id = self.app.resolve_case(case_ref)
        events = self.app.events_of(case_ref)
        latest = self.log.checkpoint()
        size = latest.size if latest else 0
        logged = {leaf.version: leaf for leaf in self.log.leaves_of(case_id)} if latest else {}
        proofs = self.log.proofs(size, (leaf.index for leaf in logged.values() if leaf.index < size)) \
            if latest else None
        uncovered = []
        for event in events:
            line = chain.export_document(event)
            leaf = logged.get(event.originator_version)
            if leaf is not None and leaf.index < size and proofs is not None:
                line["proof"] = {"leaf_index": leaf.index, "tree_size": size,
                                 "hashes": [b64(h) for h in proofs.inclusion(leaf.index)]}
            else:
                line["proof"] = None
                uncovered.append(event.originator_version)
            yield line
        last = events[-1]
        head = (self.signer.sign_note(case_head_text(self.signer.name, case_id, last.originator_version, last.hash))
                if self.signer else None)
        closing = cosigned(self.log.store, latest).note if latest else None  # with the witnesses' cosignatures
        yield {"checkpoint": closing, "case_head": head, "not_yet_covered": uncovered}

    # ------------------------------------------------------------------ the printable case file

    def dossier(self, case_ref: str | UUID, *, due_soon_days: int, deadlines: DeadlinesOf) -> dict[str, Any]:
        """What `GET /cases/{id}/dossier.pdf` shows, as plain data: cover, timeline, deadlines, documents, the
        case's verdict (`verify_case`) and the latest signed checkpoint (audit/dossier.py)."""
        return gather(self, str(case_ref), due_soon_days=due_soon_days, deadlines=deadlines)

    # ------------------------------------------------------------------ verification

    def verify(self, *, external: Iterable[tuple[str, str]] = (), all_signatures: bool = False) -> Verdict:
        known = [*external, *(held for witness in self.witnesses for held in witness.held())]
        return verify_store(self.app, self.log if self.log.exists() else None, self.verifier, external=known,
                            all_signatures=all_signatures, labels=self._labels())

    def _labels(self) -> dict[str, str]:
        """Case numbers by id from the cases read model, to name a case whose events were all deleted."""
        store = self.log.store
        try:
            if not store.table_exists("cases"):
                return {}
            return {case_id: number for case_id, number in store.query("SELECT case_id, number FROM cases")}
        except store.database_errors:  # a read model an administrator wrote into: the events name the cases
            return {}

    def verify_case(self, case_ref: str | UUID) -> dict[str, Any]:
        """One case: its chain, its events' signatures, and each event against the stored tree under the latest
        checkpoint (the tree's root at that size recomputed from the stored nodes); and the aggregates its acts
        depend on (its municipalities' registry entries, its year's numbering: audit/depends.py), each against
        its chain and the log. The full check of the whole log against every checkpoint is `verify`."""
        return self.verified_case(case_ref)[0]

    def verified_case(self, case_ref: str | UUID) -> tuple[dict[str, Any], list[Any] | None]:
        """`verify_case`, and the case's events as it read and checked them (None when its chain does not hold),
        so that a reader showing both (the case file page) reads and decodes the case once, not twice."""
        case_id = self.app.resolve_case(case_ref)
        chained, events = self.app.verified_events(case_ref)  # from the stored bytes: never fails on what no
        report = chained.as_dict()                           # longer decodes
        if not report["ok"]:
            depends = [f.as_dict() for f in dependency_findings(self.app, self.log, events[0])] \
                if events and isinstance(events[0], Case.PetitionFiled) else []
            report.update(findings=depends, checkpoint_size=None, not_yet_covered=report["events"])
            return report, None
        if not isinstance(events[0], Case.PetitionFiled):  # an aggregate, but no case (a token, a municipality)
            raise CaseNotFoundError(case_ref)
        findings: list[Finding] = dependency_findings(self.app, self.log, events[0])
        latest = self.log.checkpoint() if self.log.exists() else None
        checkpoint, size = None, 0
        if latest is not None and self.verifier is not None:
            try:
                checkpoint = open_checkpoint(latest.note, self.verifier)
                size = checkpoint.size
            except NoteError as error:
                findings.append(Finding("checkpoint", f"the latest stored checkpoint does not verify: {error}"))
        try:
            logged = {leaf.version: leaf for leaf in self.log.leaves_of(case_id)} if self.log.exists() else {}
        except merkle.ProofError as error:  # a leaf record of the case altered: this verdict names it
            findings.append(Finding("tree", str(error)))
            logged = {}
        proofs = self.log.proofs(size, (leaf.index for leaf in logged.values() if leaf.index < size)) \
            if checkpoint else None
        if proofs is not None:
            try:
                if proofs.root() != checkpoint.root:
                    findings.append(Finding("checkpoint", f"the stored tree's root at size {size} is not the "
                                            "signed one: the tree or the events were altered"))
            except merkle.ProofError as error:
                findings.append(Finding("checkpoint", str(error)))
        uncovered = 0
        for event in events:
            version, entry = event.originator_version, entry_of(case_id, event.originator_version, event.hash)
            leaf = logged.get(version)
            covered = leaf is not None and leaf.index < size and proofs is not None
            if leaf is not None and leaf.event_hash != event.hash:
                findings.append(Finding("rewritten", f"event {version} was rewritten after it was logged",
                                        str(case_id), report["label"], version))
            elif covered:
                try:
                    merkle.verify_inclusion(leaf.index, size, merkle.leaf_hash(entry), proofs.inclusion(leaf.index),
                                            checkpoint.root)
                except merkle.ProofError:
                    findings.append(Finding("checkpoint", f"event {version} is not under the signed root",
                                            str(case_id), report["label"], version))
            if not covered:
                uncovered += 1
                signature = getattr(event, "signature", None)
                if signature is None and (latest is not None or any(getattr(e, "signature", None) for e in events)):
                    findings.append(Finding("unsigned", f"event {version} is neither covered by a checkpoint nor "
                                            "signed: forged, or recorded without the key", str(case_id),
                                            report["label"], version))
                elif signature is not None and (self.verifier is None or not verify_event_signature(
                        self.verifier, entry, signature)):
                    findings.append(Finding("forged", f"event {version}'s signature does not verify",
                                            str(case_id), report["label"], version))
        deleted = [v for v in logged if v > len(events)]
        if deleted:
            findings.append(Finding("deleted", f"events {min(deleted)}..{max(deleted)} were logged and are no "
                                    "longer stored (its last events were deleted)", str(case_id), report["label"],
                                    min(deleted)))
        report.update(ok=report["ok"] and not findings, findings=[f.as_dict() for f in findings],
                      checkpoint_size=size or None, not_yet_covered=uncovered)
        return report, events


def _note(checkpoint: StoredCheckpoint | None) -> str | None:
    return checkpoint.note if checkpoint else None


def _with_note(checkpoint: StoredCheckpoint) -> StoredCheckpoint:
    """A stored checkpoint as served; ProofError (the API's `audit-tree-damaged`) when its note is no longer text."""
    if not isinstance(checkpoint.note, str):
        raise merkle.ProofError(f"the stored checkpoint of size {checkpoint.size} holds no note text: it was altered")
    return checkpoint
