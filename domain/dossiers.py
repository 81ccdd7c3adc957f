"""A printed case file's issuance: the verification code a dossier carries on every sheet, and what a reader of a
paper copy checks it against (`/verificar/<código>`).

An issuance is an event of its own in the event store, chained, signed and in the Merkle log as every act is, so a
database administrator who edits it (the SHA-256 of the file delivered, the checkpoint it was issued against) is
found by `tramita verify` like any other altered event; a plain table would hold the same facts with nothing to
tell an edit. Its id derives from the code, so a code names one issuance and cannot be issued twice.
"""

from __future__ import annotations

import re
import secrets
from uuid import NAMESPACE_URL, UUID, uuid5

from domain.acts import ActContext, ChainedAggregate
from domain.errors import InvalidActError

DOSSIER_NAMESPACE = uuid5(NAMESPACE_URL, "urn:tramita:dossiers")
#: The letters of a code: Crockford's base 32 (no I, L, O, U), read aloud and typed from paper without confusion.
ALPHABET = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"
#: A code: four groups of four letters (80 bits, drawn by `secrets`), `K7QM-2XHD-9RTA-B3CE`.
CODE = re.compile(r"[0-9A-HJKMNP-TV-Z]{4}(?:-[0-9A-HJKMNP-TV-Z]{4}){3}")


def new_code() -> str:
    letters = "".join(secrets.choice(ALPHABET) for _ in range(16))
    return "-".join(letters[i:i + 4] for i in range(0, 16, 4))


def normal_code(text: str) -> str | None:
    """A code as typed from paper (lower case, without hyphens, O for 0, I or L for 1) in its printed form; None
    when it cannot be one."""
    letters = re.sub(r"[\s-]", "", text.upper()).translate(str.maketrans("OIL", "011"))
    code = "-".join(letters[i:i + 4] for i in range(0, len(letters), 4))
    return code if CODE.fullmatch(code) else None


class DossierIssue(ChainedAggregate):
    """One dossier delivered: its code, the case, the SHA-256 of the file as delivered (after its signature) and
    the signed checkpoint the dossier showed (None: none was signed yet)."""

    class Issued(ChainedAggregate.Created):
        """The dossier with this code was delivered: the file's SHA-256 and size, the case at its version, the
        checkpoint's size and root it showed, and whether the file was signed."""

        code: str
        case_id: str
        case_number: str
        case_version: int | None
        sha256: str
        size: int
        checkpoint_size: int | None
        checkpoint_root: str | None
        signed: bool

        def assign(self, issue: DossierIssue) -> None:
            issue.code, issue.case_id, issue.case_number = self.code, self.case_id, self.case_number
            issue.case_version, issue.sha256, issue.size = self.case_version, self.sha256, self.size
            issue.checkpoint_size, issue.checkpoint_root = self.checkpoint_size, self.checkpoint_root
            issue.signed, issue.issued_at = self.signed, self.timestamp

    @staticmethod
    def id_for(code: str) -> UUID:
        return uuid5(DOSSIER_NAMESPACE, code)

    @classmethod
    def issue(cls, ctx: ActContext, *, code: str, case_id: str, case_number: str, case_version: int | None,
              sha256: str, size: int, checkpoint_size: int | None, checkpoint_root: str | None,
              signed: bool) -> DossierIssue:
        if not CODE.fullmatch(code):
            raise InvalidActError("code", "a dossier's verification code is four groups of four letters")
        return cls._start(cls.Issued, ctx, id=cls.id_for(code), article="dossier-issuance", code=code,
                          case_id=case_id, case_number=case_number, case_version=case_version, sha256=sha256,
                          size=size, checkpoint_size=checkpoint_size, checkpoint_root=checkpoint_root, signed=signed)
