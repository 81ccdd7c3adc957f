"""Languages: the pages in Portuguese (pt-BR) unless English is chosen, the JSON API's problem details in
Portuguese when the request's `Accept-Language` asks for it and in English otherwise.

The messages are gettext catalogues kept as text in the repository, `api/translations/<locale>/LC_MESSAGES/
messages.po` (the msgids are the English sentences). No `.mo` file is kept or built by hand: each process compiles
the `.po` files in memory the first time a locale is asked for (a few milliseconds, once), so an edit of a
catalogue takes effect at the next start, with no build step. Identifiers (article ids such as `art-13`, problem
`type`s, field names) are never translated.
"""

from __future__ import annotations

import io
import re
import threading
from functools import cache
from pathlib import Path

from babel import Locale, support
from babel.messages.mofile import write_mo
from babel.messages.pofile import read_po
from flask import Flask, has_request_context, request
from flask_babel import Babel, Domain, gettext

from api.fields import MESSAGES, WHATS

TRANSLATIONS = Path(__file__).resolve().parent / "translations"
#: The languages offered: the pages' default first.
PAGE_LOCALES = ("pt_BR", "en")
#: The JSON API's default: English, unless Accept-Language prefers Portuguese.
API_LOCALE = "en"
#: The cookie that keeps a page reader's choice of language (not a credential: no secret in it).
LANGUAGE_COOKIE = "tramita_lang"


class CompiledDomain(Domain):
    """flask-babel's domain, reading the `.po` catalogues compiled in memory (once per process and locale)."""

    def __init__(self, directory: Path = TRANSLATIONS) -> None:
        super().__init__(translation_directories=[str(directory)])
        self.directory = directory

    def get_translations(self) -> support.Translations | support.NullTranslations:
        from flask_babel import get_locale

        locale = get_locale() if has_request_context() else None
        if locale is None:
            return support.NullTranslations()
        return compiled_catalogue(str(locale), self.directory)


_COMPILED: dict[tuple[Path, str], support.Translations | support.NullTranslations] = {}
_COMPILING = threading.Lock()


def compiled_catalogue(locale: str, directory: Path = TRANSLATIONS) -> support.Translations | support.NullTranslations:
    """The locale's catalogue, compiled once per process (the requests' domain and the dossier, which is always in
    Portuguese and may be laid out outside a request, share it)."""
    key = (directory, locale)
    found = _COMPILED.get(key)
    if found is None:
        with _COMPILING:
            found = _COMPILED.get(key)
            if found is None:
                found = _COMPILED[key] = compile_catalogue(directory, locale)
    return found


def compile_catalogue(directory: Path, locale: str) -> support.Translations | support.NullTranslations:
    """The locale's `messages.po` as gettext translations (English, the msgids, when there is none)."""
    path = directory / locale / "LC_MESSAGES" / "messages.po"
    if not path.is_file():
        return support.NullTranslations()
    with path.open("rb") as po:
        catalogue = read_po(po, locale=locale)
    buffer = io.BytesIO()
    write_mo(buffer, catalogue, use_fuzzy=False)
    buffer.seek(0)
    return support.Translations(buffer)


def page_locale() -> str:
    """A page's language: `?lang=` when it names one offered, else the reader's cookie, else pt-BR."""
    for chosen in (request.args.get("lang"), request.cookies.get(LANGUAGE_COOKIE)):
        if chosen in PAGE_LOCALES:
            return chosen
    return PAGE_LOCALES[0]


def api_locale() -> str:
    """The JSON API's language: pt-BR when Accept-Language prefers Portuguese to English, else English."""
    best = request.accept_languages.best_match(["en", "pt-BR", "pt"], default=API_LOCALE)
    return "pt_BR" if best.lower().startswith("pt") else "en"


def select_locale() -> str:
    return page_locale() if request.blueprint == "pages" else api_locale()


def register(flask: Flask) -> None:
    """flask-babel on the app (its `gettext`, `lazy_gettext` and the templates' `_()`), reading the catalogues
    compiled in memory, with the two ways of choosing a language."""
    babel = Babel(flask, locale_selector=select_locale, default_locale=API_LOCALE, configure_jinja=True)
    babel.domain_instance = CompiledDomain()  # flask-babel's default domain would read .mo files


def locale_name() -> str:
    """The request's locale as a BCP 47 tag (`pt-BR`, `en`), for `lang=` and `Content-Language`."""
    from flask_babel import get_locale

    locale = get_locale() if has_request_context() else None
    return str(locale or Locale.parse(API_LOCALE)).replace("_", "-")


# ------------------------------------------------------------------ the refusals' words

#: marshmallow's own messages as the API gives them (`str.format` templates; a Range's operator spelled out), and
#: api/fields.py's: each is a msgid of the catalogues, its `{placeholders}` kept in the translation.
_RANGES = [f"Must be {low} {{min}} and {high} {{max}}." for low in ("greater than or equal to", "greater than")
           for high in ("less than or equal to", "less than")]
_RANGES += [f"Must be {low} {{min}}." for low in ("greater than or equal to", "greater than")]
_RANGES += [f"Must be {high} {{max}}." for high in ("less than or equal to", "less than")]
MARSHMALLOW_MESSAGES = (
    "Missing data for required field.", "Field may not be null.", "Invalid value.", "Unknown field.",
    "Invalid input type.", "Not a valid list.", "Not a valid string.", "Not a valid utf-8 string.",
    "Not a valid UUID.", "Not a valid number.", "Number too large.", "Not a valid integer.",
    "Special numeric values (nan or infinity) are not permitted.", "Not a valid boolean.", "Not a valid date.",
    '"{input}" cannot be formatted as a date.', "Not a valid mapping type.", "Not a valid URL.",
    "Not a valid email address.", "Must be one of: {choices}.", "String does not match expected pattern.",
    "Length must be between {min} and {max}.", "Length must be {equal}.", "Longer than maximum length {max}.",
    "Shorter than minimum length {min}.", *_RANGES,
)


def field_messages() -> tuple[str, ...]:
    """Every field message the API may give (marshmallow's and api/fields.py's), as templates."""
    return MARSHMALLOW_MESSAGES + MESSAGES


def _pattern(template: str) -> re.Pattern[str]:
    """The messages a template makes: its text as is, each `{value}` any text (a `{what}` one of its words)."""
    parts = re.split(r"\{(\w+)\}", template)
    whats = "|".join(re.escape(what) for what in WHATS)
    regex = "".join(re.escape(part) if index % 2 == 0 else f"(?P<{part}>{whats})" if part == "what" else
                    f"(?P<{part}>.+?)" for index, part in enumerate(parts))
    return re.compile(regex + r"\Z", re.S)


@cache
def _patterns() -> tuple[tuple[str, re.Pattern[str]], ...]:
    """Each field message's template with the pattern of the messages it makes, built at the first use."""
    return tuple((template, _pattern(template)) for template in field_messages())


def field_message(message: str) -> str:
    """A field's message in the request's language: the template it was made from, translated, filled with the
    same values (a `{what}` of api/fields.py translated too); a message of no known template as it is."""
    for template, pattern in _patterns():
        found = pattern.match(message)
        if found is not None:
            values = {name: gettext(value) if value in WHATS else value for name, value in found.groupdict().items()}
            return gettext(template).format(**values)
    return message
