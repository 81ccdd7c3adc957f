"""Every page of the demo a person reads in Portuguese, walked link by link from the case list as a clerk of the
Assembly's Mesa (who also sees the forms) and as an auditor: no identifier the API uses (a body's, a deadline's, an
act's or an event's English key, an article's id, a municipality's `new:` key before its IBGE code) and no number
left in the computer's notation (ISO dates, a decimal point) is shown where a word or a Brazilian figure belongs."""

from __future__ import annotations

import re
from collections import deque
from html.parser import HTMLParser
from urllib.parse import urljoin, urlsplit

import pytest

from domain.words import ROLE_NAMES
from tests.stores import NOW
from tests.test_pages import demo  # noqa: F401 - the pages' demo, one per module

#: Where the walk starts: the pages' navigation (and, for a body that files petitions, the new case's form).
STARTS = ("/processos", "/prazos", "/alertas", "/municipios", "/assinaturas")
#: Links that leave the Portuguese pages: the JSON API, downloads, feeds, the API's reference, the printable file.
NOT_PAGES = re.compile(r"^/(cases|municipalities|documents|alerts|feeds|subscriptions|checkpoints|exports|audit|"
                       r"statute|health|openapi|swagger|redoc|static)\b|\.(pdf|ics|json|csv)$")
#: A page of each kind is enough for the walk's as-of and list variants: the same template, another date or page.
QUERY_KEPT = 3
#: Words a person may read with a hyphen in Portuguese or as a name: none is a key of the API.
HYPHENATED_WORDS = {"e-mail", "pt-br", "dd/mm/aaaa"}


class Visible(HTMLParser):
    """The text a person reads on a page (and what a screen reader says: titles, labels, placeholders), and its
    links."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []
        self.links: list[str] = []
        self._hidden = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in ("script", "style"):
            self._hidden += 1
        found = dict(attrs)
        for name in ("title", "aria-label", "placeholder", "alt"):
            if found.get(name):
                self.parts.append(found[name])
        if tag == "a" and found.get("href"):
            self.links.append(found["href"])
        if tag == "option" and found.get("label"):
            self.parts.append(found["label"])

    def handle_endtag(self, tag: str) -> None:
        if tag in ("script", "style"):
            self._hidden -= 1

    def handle_data(self, data: str) -> None:
        if not self._hidden:
            self.parts.append(data)


def identifiers_of_the_api() -> set[str]:
    """The one-word keys the API writes that a page must put in words (the bodies'); keys with a hyphen or a
    colon (deadlines, acts, articles) are caught by their shape."""
    return {key for key in ROLE_NAMES if "-" not in key} - {"ibge"}


def walk(harness, token: str, name: str, filing: bool) -> dict[str, str]:  # noqa: ANN001
    """Every page reached from STARTS by its links, signed in with `token`: its path and visible text, where the
    token's `name` (what an administrator called it, shown as who is signed in) is set aside."""
    harness.clock.now = NOW
    client = harness.flask.test_client()
    csrf = re.search(rb'name="csrf" value="([^"]+)"', client.get("/").data).group(1).decode()
    assert client.post("/sessao", data={"csrf": csrf, "token": token, "proximo": "/processos"}).status_code == 303
    seen: dict[str, str] = {}
    queried: dict[str, int] = {}
    queue = deque(STARTS + (("/processos/novo",) if filing else ()))
    while queue:
        path = queue.popleft()
        if path in seen:
            continue
        answer = client.get(path)
        assert answer.status_code == 200, (path, answer.status_code)
        page = Visible()
        page.feed(answer.get_data(as_text=True))
        seen[path] = re.sub(r"\s+", " ", " ".join(page.parts)).replace(name, "«token»")
        for href in page.links:
            target = urlsplit(urljoin("http://pages" + path, href))
            if target.netloc != "pages" or NOT_PAGES.search(target.path):
                continue
            if "lang=" in target.query:
                continue  # the same page in English, where the keys' English names are in place
            link = target.path + (f"?{target.query}" if target.query else "")
            if target.query:
                queried[target.path] = queried.get(target.path, 0) + 1
                if queried[target.path] > QUERY_KEPT:
                    continue
            if link not in seen:
                queue.append(link)
    return seen


def english_or_codes(text: str, identifiers: set[str]) -> list[str]:
    """What on a page is a key of the API, a `new:` key, an ISO date or a number with a decimal point."""
    found = [word for word in re.findall(r"(?<![\w/.-])[a-z][a-z0-9]*(?:[-:][a-zA-Z0-9]+)+(?![\w-])", text)
             if word.lower() not in HYPHENATED_WORDS]
    found += re.findall(r"\bnew:\S+", text)
    found += [word for word in re.findall(r"(?<![\w-])[a-z]+(?![\w-])", text) if word in identifiers]
    found += re.findall(r"(?<![\w-])\d{4}-\d{2}-\d{2}(?![\w-])", text)
    found += re.findall(r"(?<![\w.,])\d{4,}\.\d+(?![\w.])", text)
    found += re.findall(r"\b[A-Z][a-z]+\.[A-Z][A-Za-z]+\b", text)  # an event's class, Case.DeadlineOpened
    return found


@pytest.mark.parametrize("role", ["assembly-mesa", "assembly-president", "governor", "tre", "ibge", "auditor"])
def test_no_page_of_the_demo_shows_a_key_of_the_api_or_a_number_in_the_computers_notation(demo, role):
    pages = walk(demo, demo.token(role), f"test-{role}", filing=role in ("assembly-mesa", "governor"))
    assert len(pages) > len(STARTS) + 4, sorted(pages)
    forms = sorted(path for path in pages if "/atos/" in path)
    assert (forms == []) == (role == "auditor"), forms  # an auditor sees no form; every other body has one here
    identifiers = identifiers_of_the_api()
    shown = {path: found for path, text in pages.items() if (found := english_or_codes(text, identifiers))}
    assert shown == {}


def test_the_walk_would_see_the_codes_the_pages_once_showed():
    identifiers = identifiers_of_the_api()
    once = ("Quem: governor; prazo plenary-registration (art-26-par-unico), ledger-transfer:1200450; "
            "Município new:LC35-1991-0001 em 1991-12-20; área 27975.427; Case.DeadlineOpened")
    assert set(english_or_codes(once, identifiers)) == {
        "plenary-registration", "art-26-par-unico", "ledger-transfer:1200450", "new:LC35-1991-0001", "governor",
        "1991-12-20", "27975.427", "Case.DeadlineOpened"}
    shown = "Publicado em 20/12/1991; área 27.975,427 km²; e-mail; Cruzeiro do Sul"
    assert english_or_codes(shown, identifiers) == []
