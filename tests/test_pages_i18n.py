"""The catalogues: every sentence of the pages and of the API's problem details has its Portuguese translation,
with the same placeholders, and no compiled file is kept (each process compiles the `.po` in memory)."""

from __future__ import annotations

from http import HTTPStatus
from pathlib import Path

from babel.messages.extract import extract_from_dir
from babel.messages.pofile import read_po

REPO = Path(__file__).resolve().parents[1]
CATALOGUE = REPO / "api" / "translations" / "pt_BR" / "LC_MESSAGES" / "messages.po"
METHODS = [("templates/**.html", "jinja2"), ("**.py", "python")]
KEYWORDS = {"_": None, "gettext": None, "lazy_gettext": None, "_l": None, "ngettext": (1, 2)}


def catalogue():  # noqa: ANN201
    with CATALOGUE.open("rb") as po:
        return read_po(po, locale="pt_BR")


def extracted() -> set[str | tuple[str, str]]:
    """Every sentence (a plural one as its singular and plural)."""
    return {message if isinstance(message, str) else tuple(message)
            for _, _, message, _, _ in extract_from_dir(str(REPO / "api"), METHODS, keywords=KEYWORDS)}


def test_every_sentence_of_the_pages_and_the_problem_details_is_translated_into_portuguese():
    translated = {m.id: m.string for m in catalogue() if m.id}
    sentences = extracted()
    assert len(sentences) > 150  # the extraction found the templates and the code
    missing = sorted((s for s in sentences if not translated.get(s) or (isinstance(s, tuple) and not all(
        translated[s]))), key=str)
    assert not missing, "untranslated (add them to api/translations/pt_BR/LC_MESSAGES/messages.po): " + repr(missing)


def test_each_translation_keeps_the_placeholders_of_its_sentence_and_none_is_fuzzy():
    found = catalogue()
    problems = [(message.id, [str(e) for e in errors]) for message, errors in found.check()]
    assert not problems
    assert not [m.id for m in found if m.id and m.fuzzy]


def test_every_problem_title_the_api_answers_with_is_translated():
    translated = {m.id: m.string for m in catalogue() if m.id}
    for status in (400, 401, 403, 404, 405, 408, 409, 412, 413, 414, 415, 422, 428, 429, 431, 500, 503):
        assert translated.get(HTTPStatus(status).phrase), status


def test_no_compiled_catalogue_is_kept_in_the_repository():
    assert not list((REPO / "api" / "translations").rglob("*.mo"))
