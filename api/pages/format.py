"""How the pages write what they show: dates as dd/mm/aaaa (ISO in English), recorded times in Rio Branco's time,
and words for the identifiers (stages, kinds, bodies, deadline statuses).

The act labels are the statute's own (`lifecycle.acts` in domain/statute/lifecycles.toml, in Portuguese); the
other words are English msgids translated by the catalogue (api/translations), as every text of the pages is.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from datetime import date, datetime
from decimal import Decimal
from typing import Any

from flask_babel import format_currency, format_decimal, get_locale, gettext as _, lazy_gettext as _l, ngettext
from markupsafe import Markup

from domain.application import LEGAL_TIMEZONE
from domain.case.kinds import DISTRICT_KINDS
from domain.words import (DEADLINE_NAMES, KIND_NAMES, ROLE_NAMES, STAGE_NAMES, SYSTEM_ALERT_NAMES, article_words,
                          deadline_parts)

#: The case kinds and stages by name: their msgids live below the pages (domain/words.py), which the CLI shares.
KINDS = {kind: _l(name) for kind, name in KIND_NAMES.items()}
STAGES = {stage: _l(name) for stage, name in STAGE_NAMES.items()}
#: The bodies by name: their msgids live below the pages (domain/words.py), which the alerts' e-mails share.
ROLES = {role: _l(name) for role, name in ROLE_NAMES.items()}
DEADLINE_STATUSES = {
    "open": _l("open"), "due-soon": _l("due soon"), "missed": _l("missed"), "met-on-time": _l("met on time"),
    "met-late": _l("met late"), "ended": _l("ended with the archive"),
}
FIGURES = {"population": _l("population"), "voters": _l("voters"), "revenue": _l("revenue (R$)"),
           "buildings": _l("buildings"), "area_km2": _l("area (km²)")}
#: How an alert's delivery to the operators' webhook stands (the alerts table's `delivery`; none: not yet).
DELIVERIES = {"delivered": _l("delivered"), "failed": _l("delivery failed; tried again on the schedule")}
ALERT_KINDS = {"due-soon": _l("due soon"), "missed": _l("missed"), "breach": _l("breach"),
               # the system's own alerts, by name below the pages (domain/words.py), which the webhook's body shares
               **{kind: _l(name) for kind, name in SYSTEM_ALERT_NAMES.items()}}
#: Events a case records that are not acts of a body (the catalogue of acts does not name them).
SYSTEM_EVENTS = {
    "DeadlineOpened": _l("deadline opened"), "DeadlineMet": _l("deadline met"),
    "DeadlineMissed": _l("deadline missed"), "DeadlineDueDateSet": _l("deadline's due date set"),
    "CaseConcluded": _l("case concluded"), "RequirementsLapsed": _l("requirements lapsed"),
    "DocumentsAttached": _l("documents attached to the act"),
}


def portuguese() -> bool:
    locale = get_locale()
    return locale is not None and locale.language == "pt"


def day(value: date | str | None) -> str:
    """dd/mm/aaaa (yyyy-mm-dd in English); an empty string for no date."""
    return _day(value, portuguese())


def moment(value: datetime | str | None) -> str:
    """A recorded time in Rio Branco's time, to the minute: `30/11/2026 10:00`."""
    in_portuguese = portuguese()
    return _moment(value, lambda local: _day(local, in_portuguese))


def _day(value: date | str | None, in_portuguese: bool) -> str:
    if value in (None, ""):
        return ""
    found = date.fromisoformat(value) if isinstance(value, str) else value
    return found.strftime("%d/%m/%Y") if in_portuguese else found.isoformat()


def _moment(value: datetime | str | None, day_of: Callable[[date], str]) -> str:
    if value in (None, ""):
        return ""
    found = datetime.fromisoformat(value) if isinstance(value, str) else value
    local = found.astimezone(LEGAL_TIMEZONE)
    return f"{day_of(local.date())} {local.hour:02d}:{local.minute:02d}"  # %H:%M, without strftime's cost


def legal_day_of(recorded_at: str) -> date:
    """The day in Rio Branco on which a UTC time fell (a recording's day, compared with its legal date)."""
    return datetime.fromisoformat(recorded_at).astimezone(LEGAL_TIMEZONE).date()


def label(table: dict[str, Any], key: str | None) -> str:
    """The words for an identifier; the identifier itself when there are none."""
    if key is None:
        return ""
    found = table.get(key)
    return str(found) if found is not None else key


def kind(value: str | None) -> str:
    return label(KINDS, value)


def stage(value: str | None) -> str:
    return label(STAGES, value)


def role(value: str | None) -> str:
    return label(ROLES, value)


def deadline_status(value: str | None) -> str:
    return label(DEADLINE_STATUSES, value)


def deadline(key: str | None, names: dict[str, str] | None = None) -> str:
    """A deadline by what is due (domain/words.py), its qualifier by name where it is a municipality's code in
    `names` (`ledger-transfer:1200450`: the books of account sent by Senador Guiomard); an unknown key as it is."""
    rule, which = deadline_parts(key)
    name = DEADLINE_NAMES.get(rule)
    if name is None:
        return key or ""
    return _(name, which=(names or {}).get(which or "", which or _("the origin municipality")))


#: How a subscription reaches its body (domain/subscriptions.py `channel`).
CHANNELS = {"email": _l("e-mail"), "webhook": _l("webhook (a system's address)"), "feed": _l("calendar feed")}


def channel(value: str | None) -> str:
    return label(CHANNELS, value)


def delivery(value: str | None) -> str:
    return label(DELIVERIES, value) if value else _("not yet delivered")


#: The key of a municipality a law created before the IBGE gave it a code (domain/registry.py): `new:<case number>`.
_PENDING_CODE = re.compile(r"new:(.+)")


def code(value: str | None) -> str:
    """A municipality's IBGE code; for one created by a law and not yet coded by the IBGE, words saying so."""
    pending = _PENDING_CODE.fullmatch(value or "")
    if pending is None:
        return value or ""
    return _("no IBGE code yet (created by case %(case)s)", case=pending.group(1))


def figure_value(name: str, value: Any) -> str:
    """A registry figure in the reader's notation (Babel: `27.975,427` in pt-BR), revenue as money (R$)."""
    if value is None or value == "":
        return ""
    try:
        number = Decimal(str(value))
    except ArithmeticError:
        return str(value)
    if name == "revenue":
        return format_currency(number, "BRL")
    return format_decimal(number)


def figure(value: str | None) -> str:
    return label(FIGURES, value)


#: A warning before the due day: `due-in-N-days` (domain/alerts.py), one for each threshold configured.
_DUE_IN = re.compile(r"due-in-([0-9]{1,5})-days")


def alert_kind(value: str | None) -> str:
    warning = _DUE_IN.fullmatch(value or "")
    if warning is not None:
        return ngettext("due in %(num)s day", "due in %(num)s days", int(warning.group(1)))
    return label(ALERT_KINDS, value)


class Words:
    """The words of the functions above, for one page: its language looked up once, and each identifier's words
    (a role, an article, a status) and each sentence translated once.

    A case's timeline writes hundreds of rows, each naming a role, an article and two dates; asking flask-babel
    for the request's locale and translation at each of them was most of the page's time. One page is written in
    one language, so a `Words` lives for one rendering and is never kept."""

    def __init__(self) -> None:
        self.portuguese = portuguese()
        self._memo: dict[tuple[Any, ...], str] = {}

    def _words(self, key: tuple[Any, ...], write: Any, *args: Any) -> str:
        found = self._memo.get(key)
        if found is None:
            found = self._memo[key] = write(*args)
        return found

    def day(self, value: date | str | None) -> str:
        return self._words(("day", value), _day, value, self.portuguese)

    def moment(self, value: datetime | str | None) -> str:
        return _moment(value, self.day)

    def role(self, value: str | None) -> str:
        return self._words(("role", value), role, value)

    def deadline(self, key: str | None, names: dict[str, str] | None = None) -> str:
        return self._words(("deadline", key), deadline, key, names)

    def deadline_status(self, value: str | None) -> str:
        return self._words(("deadline_status", value), deadline_status, value)

    def article(self, value: str | None) -> str:
        return self._words(("article", value), article, value)

    def markup(self, message: str, **variables: Any) -> Markup:
        """A template's `_(message, **variables)` (Jinja's with autoescape): the translation taken as markup and
        the variables escaped into it; the message translated once per page. Bound to `_`, as `gettext` is."""
        return Markup(self._words(("gettext", message), _, message)) % variables

    def gettext(self, message: str, **variables: Any) -> str:
        """flask-babel's `gettext(message, **variables)`, the message translated once per page. Bound to `_` where
        it is called, so that extracting the catalogue's sentences (docs/pages.md) still finds the message."""
        found = self._words(("gettext", message), _, message)
        return found % variables if variables else found


def act_labels(catalogue: dict[str, dict[str, Any]], case_kind: str) -> tuple[dict[str, str], dict[str, str]]:
    """(act -> label, event type -> label) for a case of `case_kind`: the statute's labels (Portuguese) in
    Portuguese, the act's id in words otherwise. An event recorded by several acts (the petition, the law, the
    archive) takes the act of the case's kind (the district's for a district case)."""
    def specific(act: str) -> bool:
        return act.startswith("district-") or act == "extinction-requested"

    def fits(act: str) -> bool:
        if act.startswith("district-"):
            return case_kind in DISTRICT_KINDS
        return act != "extinction-requested" or case_kind == "extinction"

    by_act = {act: entry.get("label", act) if portuguese() else act.replace("-", " ")
              for act, entry in catalogue.items()}
    by_event: dict[str, str] = {f"Case.{event}": str(words) for event, words in SYSTEM_EVENTS.items()}
    for act, entry in catalogue.items():
        key = f"Case.{entry.get('event')}"
        if fits(act) and (key not in by_event or specific(act)):
            by_event[key] = by_act[act]
    return by_act, by_event


def event_label(labels: dict[str, str], event_type: str) -> str:
    return labels.get(event_type) or event_type.rsplit(".", 1)[-1]


def article(value: str | None) -> str:
    """`art-23-I` as `Art. 23, I`; `art-10-par-1` as `Art. 10, § 1`; `art-4-par-unico` as `Art. 4, par. único`."""
    return article_words(value, _("sole paragraph"))


FILTERS = {"day": day, "moment": moment, "kind": kind, "stage": stage, "role": role,
           "deadline_status": deadline_status, "alert_kind": alert_kind, "article": article, "figure": figure}
