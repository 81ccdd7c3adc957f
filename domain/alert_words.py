"""A case's alert in words, the same in every channel that tells it: the e-mail (infrastructure/mail.py) and the
webhook's body and log line (scheduler/jsonlog.py).

The words are English msgids given to the reader's catalogue through the `gettext` the caller passes (the identity
leaves them English), so the domain knows no language: how the deadline stands ("Prazo vencido"), the days left or
late, the body that must act by name (domain/words.py), its municipality by name with the IBGE code after, what is
due by the deadline's name, the article as the law writes it and the due date as dd/mm/aaaa.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import date
from typing import Any

from domain.alerts import BREACH, MISSED
from domain.words import DEADLINE_NAMES, ROLE_NAMES, article_words, deadline_parts

Gettext = Callable[[str], str]
#: A municipality's name by its key (an IBGE code, or `new:<case number>` before the IBGE codes one); None: unknown.
Namer = Callable[[str], "str | None"]
#: The sentence of `AlertWords.sentence`, a msgid of the catalogue.
SENTENCE = ("%(state)s in case %(case)s: %(deadline)s (LC 35/1991, %(article)s), by %(who)s, due on %(due)s, "
            "%(when)s.")


def _same(text: str) -> str:
    return text


def _nameless(code: str) -> str | None:
    return None


def day(value: date) -> str:
    """A date as people in Brazil write it: dd/mm/aaaa."""
    return value.strftime("%d/%m/%Y")


def municipality_words(code: str, name: str | None, gettext: Gettext = _same) -> str:
    """A municipality by name with its IBGE code after (`Plácido de Castro (IBGE 1200385)`); one a law created and
    the IBGE has not coded yet (`new:<case>`) says so (`Vila Nova, ainda sem código IBGE (…)`); an unnamed one is its
    code."""
    if code.startswith("new:"):
        pending = gettext("no IBGE code yet (created by case %(case)s)") % {"case": code[4:]}
        return f"{name}, {pending}" if name else pending
    return f"{name} (IBGE {code})" if name else code


@dataclass(frozen=True)
class AlertWords:
    """One case alert said in the reader's words."""

    state: str
    """How the deadline stands: `Prazo vencido`, `Prazo vence em 5 dia(s)`, `Requisição recusada (infração)`."""
    when: str
    """The days left or late: `faltam 5 dia(s)`, `vencido há 3 dia(s)`, `vence hoje`."""
    who_name: str
    """The body that must act by name, without its municipality."""
    municipality: str | None
    """The body's municipality by name, its IBGE code after (None: a body of the State)."""
    deadline: str
    """What is due, by the deadline's name (`resposta à requisição R1`)."""
    article: str
    """The article as the law writes it (`Art. 26, parágrafo único`)."""
    due: str
    """The due date, dd/mm/aaaa (ISO for an English reader)."""

    @property
    def who(self) -> str:
        """The body that must act, with its municipality when it is one's (`Câmara Municipal — Feijó (IBGE
        1200302)`)."""
        return f"{self.who_name} — {self.municipality}" if self.municipality else self.who_name

    def sentence(self, case_number: str, gettext: Gettext = _same) -> str:
        """The alert in one sentence, for a reader of a webhook's body or of the log."""
        return gettext(SENTENCE) % {"state": self.state, "case": case_number, "deadline": self.deadline,
                                    "article": self.article, "who": self.who, "due": self.due, "when": self.when}


def alert_words(alert: Mapping[str, Any], gettext: Gettext = _same, names: Namer = _nameless,
                dates: Callable[[date], str] = day, number: Callable[[int], str] = str) -> AlertWords:
    """A case alert's words, from its fields as `scheduler.jsonlog.alert_fields` gives them (codes and ISO dates);
    `names` names a municipality by its key (the alert's and a deadline's origin), `dates` writes the due date
    (dd/mm/aaaa; an English reader's is ISO, as the pages write it) and `number` the days (Babel's `12.386`)."""
    _ = gettext
    due, raised = date.fromisoformat(alert["due_on"]), date.fromisoformat(alert["raised_on"])
    left = (due - raised).days
    late = alert.get("days_overdue") or max(0, -left)
    if alert["kind"] in (MISSED, BREACH):
        state = _("Deadline missed") if alert["kind"] == MISSED else _("Requisition refused (breach)")
        when = _("%(days)s day(s) late") % {"days": number(late)} if late else _("due today")
    else:
        state = _("Deadline due in %(days)s day(s)") % {"days": number(left)} if left else _("Deadline due today")
        when = _("%(days)s day(s) left") % {"days": number(left)} if left else _("due today")
    code = alert.get("municipality")
    return AlertWords(state=state, when=when, who_name=_(ROLE_NAMES.get(alert["who"] or "", alert["who"] or "")),
                      municipality=municipality_words(code, names(code), _) if code else None,
                      deadline=deadline_words(alert["deadline"], _, names),
                      article=article_words(alert["article"], _("sole paragraph")), due=dates(due))


def deadline_words(key: str | None, gettext: Gettext = _same, names: Namer = _nameless) -> str:
    """A deadline by what is due (domain/words.py), its qualifier by name when it is a municipality's key
    (`ledger-transfer:1200450`: the books of account sent by Senador Guiomard); an unknown key as it is."""
    rule, which = deadline_parts(key)
    name = DEADLINE_NAMES.get(rule)
    if name is None:
        return key or ""
    named = names(which) if which and (which.isdigit() or which.startswith("new:")) else None
    return gettext(name) % {"which": named or which or gettext("the origin municipality")}
