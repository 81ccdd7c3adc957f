"""The scheduler's removal of the documents no act cited in time (audit/documents.py `Documents.expire`): a job of
the leader, on TRAMITA_DOCUMENT_EXPIRY_CRON (hourly by default), taking its turn with the scan (they share the
projector, which it first brings up to date so that every act recorded cites what it cites)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from audit.documents import Documents, DocumentStore
from projections.queries import document_cited


@dataclass
class DocumentExpiry:
    """One leader's expiry runs, over its scanner's application, store, projector, turn, log and leadership."""

    scanner: Any
    database_url: str
    days: int

    def run(self) -> int:
        """Remove what is due, log each removal and then how many (the event log records each as a
        `document-expired` alert, which the next scan hands to the webhook); how many were removed."""
        scanner = self.scanner
        with scanner.turn:
            if scanner.leadership is not None:
                scanner.leadership.check()
            documents = Documents(scanner.app, DocumentStore(self.database_url),
                                  cited=lambda sha256: document_cited(scanner.store, sha256))
            try:
                removed = documents.expire(self.days, catch_up=scanner.projector.catch_up)
            finally:
                documents.store.close()
        for removal in removed:
            scanner.log("document-expired", sha256=removal.sha256, size=removal.size, stored_at=removal.stored_at,
                        last_upload=removal.last_upload, body=removal.body)
        if removed:  # an hourly run that removes nothing logs nothing
            scanner.log("document-expiry", removed=len(removed), days=self.days)
        return len(removed)
