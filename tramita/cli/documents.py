"""`tramita documents expire`: remove the documents no act cited in time (audit/documents.py `Documents.expire`).

The scheduler runs the same removal on its own schedule; this is the command an operator (or a cron without the
scheduler) runs. Each removal is recorded in the event log as a system alert (`document-expired`).
"""

from __future__ import annotations

import argparse
import os

from audit.document_limits import expiry_days_from
from tramita.bootstrap import build_application, build_documents, build_projector
from tramita.cli.language import day, say


def cmd_documents_expire(args: argparse.Namespace) -> int:
    """Bring the projections up to date, remove what is uncited past the expiry, say what was removed."""
    days = expiry_days_from({"TRAMITA_DOCUMENT_EXPIRY_DAYS": str(args.days)} if args.days is not None
                            else os.environ)
    app = build_application()
    projector = build_projector(app)
    documents = build_documents(app, projector.store)
    try:
        removed = documents.expire(days, catch_up=projector.catch_up)
    finally:
        documents.store.close()
    for removal in removed:
        print(say("removed %(digest)s (%(size)s bytes, last upload on %(day)s)", digest=removal.sha256,
                  size=removal.size, day=day(removal.last_upload)))
    print(say("%(count)s document(s) removed: no act cited them within %(days)s day(s) of their last upload",
              count=len(removed), days=days))
    return 0
