"""The documents an act cites, attached to it: each by the SHA-256 of its bytes, with its name, type and size.

An act's free-text references (the decree, the law, the TRE's resolution) say which document was meant; the
attachment proves it. The act's own event is not changed: the attachments are recorded as one more event of the
case, `Case.DocumentsAttached`, in the same save as the act and right after its events, naming the act and the
version of its event. So every event class keeps its shape (no class version, no upcast), the attachment is in the
case's hash chain, the audit log's tree and the export like any event, and an act without attachments records
exactly what it recorded before. The bytes themselves are kept outside the events (audit/documents.py).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from domain.acts import ActContext, ChainedAggregate
from domain.errors import InvalidActError, Sentence
from domain.lifecycle import act_catalogue

if TYPE_CHECKING:
    from domain.case import Case


class DocumentsAttached(ChainedAggregate.Event):
    """The documents an act cites, by SHA-256 (under the act's article): attached to the act's event.

    `documents`: each `{"sha256", "name", "type", "size"}` (the hex digest of the bytes, the name the body gave it,
    its media type, its size in bytes). Not one of the case's acts: the order of acts and the case's last act stay
    as the act left them; only the chain's head moves.
    """

    act: str
    act_version: int
    documents: list[dict[str, Any]]

    def apply(self, case: Any) -> None:
        case.last_hash = self.hash
        self.assign(case)

    def assign(self, case: Case) -> None:
        attached = case.__dict__.setdefault("attachments", [])
        attached.extend({**document, "act": self.act, "act_version": self.act_version, "on": self.occurred_on}
                        for document in self.documents)


class Attachments:
    """Attaching the documents an act cites to the event that records it."""

    def attach_documents(self: Case, ctx: ActContext, act: str, documents: list[dict[str, Any]]) -> None:
        """Record the documents `act` cites, after the act's events (recorded by this command, not yet saved).

        The act's event is the one the catalogue of acts names for it (`lifecycle.acts`); the attachment takes
        its article. Each document is as the API described it from the store: sha256, name, type, size.
        """
        if not documents:
            return
        event_name = act_catalogue(ctx.statute, ctx.occurred_on)[act].event
        recorded = [e for e in self.pending_events if type(e).__name__ == event_name]
        if not recorded:
            raise InvalidActError("attachments", Sentence("the act %(act)s recorded no %(event)s to attach documents "
                                                           "to", act=act, event=event_name))
        event = recorded[-1]
        self._record_attachment(ctx, act=act, event=event, documents=documents)

    def _record_attachment(self: Case, ctx: ActContext, *, act: str, event: Any,
                           documents: list[dict[str, Any]]) -> None:
        # Through ChainedAggregate._record, not the admission's: an attachment is not an act of the lifecycle.
        ChainedAggregate._record(self, self.DocumentsAttached, ctx, article=event.article, act=act,
                                 act_version=event.originator_version,
                                 documents=[{"sha256": d["sha256"], "name": d["name"], "type": d["type"],
                                             "size": d["size"]} for d in documents])
