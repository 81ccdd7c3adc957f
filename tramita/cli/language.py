"""The command line's language: what a person reads (errors, confirmations, summaries) in Portuguese (pt-BR), or in
English when the environment asks for it (LC_ALL, LC_MESSAGES or LANG, as POSIX orders them, starting with `en`).

The words are the pages' catalogue (api/translations, compiled in memory by api/i18n.py): each message is an English
msgid given to `say`, its values filled after the translation, whole numbers grouped as the language writes them
(Babel: `12.386` in Portuguese). JSON outputs, identifiers (ids, codes, tokens, article ids in tables) and argparse's
own help stay as they are.
"""

from __future__ import annotations

import os
from datetime import date
from gettext import NullTranslations
from typing import Any

#: The variables that choose the language, the first one set deciding (POSIX's order).
LANGUAGE_VARIABLES = ("LC_ALL", "LC_MESSAGES", "LANG")


def english() -> bool:
    """Whether the user asked for English (the first of LC_ALL, LC_MESSAGES, LANG that is set starts with `en`)."""
    chosen = next((os.environ[name] for name in LANGUAGE_VARIABLES if os.environ.get(name)), "")
    return chosen.lower().startswith("en")


def language() -> Any:
    """The catalogue of the language the command's user reads: Portuguese first, the English msgids when asked."""
    return NullTranslations() if english() else _portuguese()


def _portuguese() -> Any:
    from api.i18n import compiled_catalogue

    return compiled_catalogue("pt_BR")


def number(value: int) -> str:
    """A whole number as the user's language groups it (`12,386`; `12.386`)."""
    from babel.numbers import format_decimal

    return format_decimal(value, locale="en" if english() else "pt_BR")


def day(value: date | str | None) -> str:
    """A day as the user's language writes it: dd/mm/aaaa in Portuguese, ISO (YYYY-MM-DD) in English; a moment (an
    ISO timestamp) by its day; anything else as it is."""
    if value is None or english():
        return "" if value is None else str(value)
    try:
        return date.fromisoformat(str(value)[:10]).strftime("%d/%m/%Y")
    except ValueError:
        return str(value)


def named_body(role: str, municipality: str | None = None, name: str | None = None) -> str:
    """A body by name in the user's language (`Prefeito de Feijó (IBGE 1200302)`), its code when it has none."""
    from domain.alert_words import municipality_words
    from domain.words import ROLE_NAMES

    gettext = language().gettext
    said = gettext(ROLE_NAMES[role]) if role in ROLE_NAMES else role
    if municipality:
        said += " " + say("of %(municipality)s", municipality=municipality_words(municipality, name, gettext))
    return said


def tenths(value: float) -> str:
    """A measure to a tenth, as the user's language writes it (`1.5`; `1,5`)."""
    from babel.numbers import format_decimal

    return format_decimal(round(value, 1), format="#,##0.0", locale="en" if english() else "pt_BR")


def say(message: str, **values: Any) -> str:
    """`message` (an English msgid) in the user's language, filled with `values` (whole numbers grouped)."""
    text = language().gettext(message)
    if not values:
        return text
    return text % {name: number(value) if isinstance(value, int) and not isinstance(value, bool) else value
                   for name, value in values.items()}


def spoken(message: Any) -> str:
    """A sentence of the domain (or a plain message) in the user's language, whole numbers grouped."""
    from domain.errors import sentence

    return sentence(message).render(language().gettext, number)


def told(error: BaseException) -> str:
    """An error's message in the user's language: a refusal of the domain through its sentence (the article in
    words), a case not found through its template; any other error's message as the catalogue has it, or as it is."""
    from domain.errors import CaseNotFoundError, InvalidActError, LegalRuleError
    from domain.words import article_words

    translations = language()
    gettext = translations.gettext
    sentence = getattr(error, "sentence", None)
    if sentence is not None and hasattr(sentence, "render"):
        said = sentence.render(gettext, number)
        article = getattr(error, "article", None)
        where = [article_words(article, gettext("sole paragraph"))] if article else []
        if isinstance(error, InvalidActError):
            where.append(error.field)
        if isinstance(error, (InvalidActError, LegalRuleError)):
            return ": ".join([*where, said])
        return said
    if isinstance(error, CaseNotFoundError):
        return gettext(error.template) % error.values
    text = str(error)
    return gettext(text) if text else text
