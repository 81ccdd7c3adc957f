"""Signed receipts of acts, and the signed head of a case: notes a body keeps outside tramita.

A receipt (in every 2xx answer to an act) is a signed note whose text is seven lines:
    <origin>
    tramita-receipt
    <aggregate id (UUID)>
    <version>
    <event chain hash, hex>
    <notification id>
    <recorded at, ISO 8601 UTC>
It names the last event the act stored on its case (or registry entry); that event's hash commits, through
`prev_hash`, to every earlier event of the case. A receipt whose event is later missing or different is proof
of tampering (`tramita verify --receipt FILE`).

A case head (the last line of an export) is a signed note whose text is exactly four lines:
    <origin>
    <case id (UUID)>
    <last version>
    <last hash, hex>
so an offline verifier can reject an export cut short.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime, timezone
from uuid import UUID

from audit.notes import NoteError, Signer, Verifier, open_note

RECEIPT_MARK = "tramita-receipt"


@dataclass(frozen=True)
class ActReceipt:
    origin: str
    aggregate_id: UUID
    version: int
    hash: str
    notification_id: int
    recorded_at: datetime

    def text(self) -> str:
        recorded = self.recorded_at.astimezone(timezone.utc).isoformat()
        return (f"{self.origin}\n{RECEIPT_MARK}\n{self.aggregate_id}\n{self.version}\n{self.hash}\n"
                f"{self.notification_id}\n{recorded}\n")

    def as_dict(self) -> dict[str, object]:
        return {"aggregate_id": str(self.aggregate_id), "version": self.version, "hash": self.hash,
                "notification_id": self.notification_id,
                "recorded_at": self.recorded_at.astimezone(timezone.utc).isoformat()}


def sign_receipt(signer: Signer, receipt: ActReceipt) -> str:
    return signer.sign_note(receipt.text())


def open_receipt(note: str, verifier: Verifier) -> ActReceipt:
    """The receipt in a note signed by `verifier`; NoteError when it is not one."""
    lines = open_note(note, verifier).split("\n")[:-1]
    if len(lines) != 7 or lines[1] != RECEIPT_MARK or lines[0] != verifier.name:
        raise NoteError("the note is not a tramita receipt of this log")
    try:
        receipt = ActReceipt(lines[0], UUID(lines[2]), int(lines[3]), lines[4], int(lines[5]),
                             datetime.fromisoformat(lines[6]))
    except ValueError as error:
        raise NoteError(f"the receipt is malformed: {error}") from None
    if not re.fullmatch(r"[0-9a-f]{64}", receipt.hash) or str(receipt.aggregate_id) != lines[2]:
        raise NoteError("the receipt is malformed")
    return receipt


def case_head_text(origin: str, case_id: UUID, version: int, last_hash: str) -> str:
    return f"{origin}\n{case_id}\n{version}\n{last_hash}\n"
