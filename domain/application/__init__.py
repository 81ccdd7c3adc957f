"""The application service of tramita: one method per act, get -> act -> save, all aggregates of an act in one save.

`Tramita` is composed of parts of one purpose each:

- `base`: the store, the clock, the statute, the act's context, retries of concurrent saves, idempotency;
- `case_acts`: the acts of a case (Art. 8-40);
- `registry_acts`: the registry of municipalities (its seed, figures, toponyms);
- `alerting`: compliance alerts and their deliveries;
- `subscriptions`: bodies' subscriptions to their alerts (webhooks) and deadlines (calendar feeds);
- `tokens`: the API's bearer tokens;
- `statute_acts`: amendments of the statute, and the statute in force on a day;
- `reads`: a case as of a date, its timeline, export and chain report.

The wiring (which store, which clock, which key) is tramita/bootstrap.py's.
"""

from __future__ import annotations

from domain.application.alerting import Alerting
from domain.application.base import LEGAL_TIMEZONE, Acted, Attaching, ConcurrentActError
from domain.application.case_acts import CaseActs
from domain.application.reads import SYSTEM_ACTOR, ChainReport, Reads, event_row
from domain.application.registry_acts import RegistryActs
from domain.application.statute_acts import StatuteActs
from domain.application.subscriptions import Subscriptions
from domain.application.tokens import Tokens
from domain.numbering import CaseNumbering

__all__ = ["LEGAL_TIMEZONE", "SYSTEM_ACTOR", "Acted", "Attaching", "CaseNumbering", "ChainReport", "ConcurrentActError",
           "Tramita", "event_row"]


class Tramita(CaseActs, RegistryActs, Alerting, Subscriptions, Tokens, StatuteActs, Reads):
    """The act-recording service of tramita (one instance per process)."""

    name = "tramita"
