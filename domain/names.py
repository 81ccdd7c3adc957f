"""Art. 17 par. ún. / Art. 32 par. ún.: a new municipality's or district's name must not repeat an existing one, nor
designate a date.

The existing names are the shipped IBGE list (`statute/br-municipalities.csv`, described by
`statute/br-municipalities.toml`) plus the names recorded later by acts (`ToponymList.with_names`).
The third rule (no living person's name) is a signed declaration, not checked here.
"""

from __future__ import annotations

import csv
import functools
import io
import itertools
import re
import tomllib
import unicodedata
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from importlib import resources

from domain.errors import Sentence

_STATUTE_PACKAGE = "domain.statute"
_METADATA_FILE = "br-municipalities.toml"

# Hyphens and apostrophes separate words like spaces do ("Olhos-d'Água" ~ "Olhos d Agua").
_WORD_SEPARATORS = re.compile(r"[\s\-\u2010\u2011\u2012\u2013\u2014'\u2018\u2019\u02bc`\u00b4]+")
_WORD = re.compile(r"[^\s\-\u2010\u2011\u2012\u2013\u2014'\u2018\u2019\u02bc`\u00b4]+")


def normalise_name(name: str) -> str:
    """Art. 17 par. ún.: the comparison key of a name, ignoring accents, case, hyphens, apostrophes and invisible
    (format) characters such as a zero-width space or a soft hyphen."""
    if name.isascii():  # no accent to take off and no format character (none is ASCII)
        bare = name
    else:
        decomposed = unicodedata.normalize("NFKD", name)
        bare = "".join(ch for ch in decomposed if not unicodedata.combining(ch) and unicodedata.category(ch) != "Cf")
    return _WORD_SEPARATORS.sub(" ", bare.casefold()).strip()


def name_fault(name: str) -> Sentence | None:
    """Art. 17 par. ún., Art. 32 par. ún.: what keeps a text from being compared as a place name, or None.

    A name with no visible letter or digit, one holding an invisible (format) character, or one holding a letter
    of another alphabet than the Latin (a Cyrillic "Е" for "E") could repeat an existing name unseen by the
    comparison. Brazil's municipalities are named in Latin letters (its IBGE list holds no other)."""
    if not normalise_name(name) or not any(ch.isalnum() for ch in name):
        return Sentence("is required: a name of visible letters")
    for position, ch in enumerate(name, start=1):
        if unicodedata.category(ch) == "Cf":
            return Sentence("holds the invisible character %(character)s at position %(position)s; write the name "
                            "in visible letters only", character=f"U+{ord(ch):04X}", position=str(position))
    foreign = dict.fromkeys(ch for ch in unicodedata.normalize("NFKD", name)
                            if ch.isalpha() and not unicodedata.name(ch, "").startswith("LATIN"))
    if foreign:
        return Sentence("holds %(letters)s, not of the Latin alphabet: a look-alike letter would hide a repeated "
                        "name", letters=", ".join(f"{ch!r} (U+{ord(ch):04X})" for ch in foreign))
    return None


@dataclass(frozen=True)
class Toponym:
    """Art. 17 par. ún.: an existing municipality's name, its state and where the name comes from."""

    name: str
    uf: str
    ibge_code: str | None
    source: str


class ToponymList:
    """Art. 17 par. ún.: the existing names a new name must not repeat (IBGE list plus recorded acts)."""

    def __init__(self, toponyms: Iterable[Toponym], *, base_version: str, extra: int = 0) -> None:
        self._base = tuple(toponyms)
        self._base_version = base_version
        self._extra = extra
        index: dict[str, list[Toponym]] = {}
        for toponym in self._base:
            index.setdefault(normalise_name(toponym.name), []).append(toponym)
        self._base_index = index
        # The names added by acts, apart: a list with more names shares its base (the IBGE list, 5,570 names)
        # and its index with the list it was made from, so adding a law's name does not copy them.
        self._added: tuple[Toponym, ...] = ()
        self._added_index: dict[str, tuple[Toponym, ...]] = {}

    @classmethod
    def shipped(cls) -> ToponymList:
        """Art. 17 par. ún.: the shipped IBGE list of municipalities (loaded once)."""
        return _load_shipped(cls)

    def with_names(self, extra: Iterable[Toponym]) -> ToponymList:
        """Art. 17 par. ún.: a new list that also holds the names recorded by acts (exact repeats skipped)."""
        added: dict[Toponym, None] = {}  # in order, each once
        for toponym in extra:
            key = normalise_name(toponym.name)
            if toponym not in self._base_index.get(key, ()) and toponym not in self._added_index.get(key, ()):
                added.setdefault(toponym)
        combined = type(self).__new__(type(self))
        combined._base, combined._base_index = self._base, self._base_index
        combined._base_version = self._base_version
        combined._extra = self._extra + len(added)
        combined._added = (*self._added, *added)
        combined._added_index = dict(self._added_index)  # only the added names are normalised again
        for toponym in added:
            key = normalise_name(toponym.name)
            combined._added_index[key] = (*combined._added_index.get(key, ()), toponym)
        return combined

    def same_name(self, name: str) -> list[Toponym]:
        """Art. 17 par. ún.: the existing toponyms whose name equals the candidate's, ignoring accents and case."""
        key = normalise_name(name)
        return [*self._base_index.get(key, ()), *self._added_index.get(key, ())]

    @property
    def added(self) -> tuple[Toponym, ...]:
        """The names recorded by acts since the IBGE snapshot, in order, each once."""
        return self._added

    def state_codes(self) -> dict[str, str]:
        """The states (UF) of the shipped IBGE list, each with the two digits its municipalities' IBGE codes begin
        with (the list's own data, so a name added by an act is checked against the same states)."""
        return {toponym.uf: toponym.ibge_code[:2] for toponym in self._base if toponym.ibge_code}

    @property
    def version(self) -> str:
        """Art. 17 par. ún.: which list answered: the IBGE snapshot, plus the count of names added by acts."""
        return f"{self._base_version}+{self._extra}" if self._extra else self._base_version

    def __len__(self) -> int:
        return len(self._base) + len(self._added)

    def __iter__(self) -> Iterator[Toponym]:
        return itertools.chain(self._base, self._added)


@functools.cache
def _load_shipped(cls: type[ToponymList]) -> ToponymList:
    folder = resources.files(_STATUTE_PACKAGE)
    metadata = tomllib.loads(folder.joinpath(_METADATA_FILE).read_text(encoding="utf-8"))
    source = str(metadata["source"])
    rows = csv.DictReader(io.StringIO(folder.joinpath(metadata["file"]).read_text(encoding="utf-8")))
    toponyms = [Toponym(row["name"], row["uf"], row["ibge_code"], source) for row in rows]
    if len(toponyms) != metadata["count"]:
        raise ValueError(
            f"{metadata['file']} holds {len(toponyms)} municipalities, its metadata says {metadata['count']}"
        )
    base_version = str(metadata.get("version") or f"ibge-{metadata['as_of']:%Y-%m}")
    return cls(toponyms, base_version=base_version)


# Portuguese day numbers (1..31) and month names, as words of the language, already normalised.
_UNITS = "um|dois|tres|quatro|cinco|seis|sete|oito|nove"
_DAY_WORDS = (
    "primeiro|um|dois|tres|quatro|cinco|seis|sete|oito|nove|dez|onze|doze|treze|catorze|quatorze"
    "|quinze|dezesseis|dezasseis|dezessete|dezassete|dezoito|dezenove|dezanove"
    f"|vinte(?: e (?:{_UNITS}))?|trinta(?: e um)?"
)
_DAY_DIGITS = r"(?:0?[1-9]|[12][0-9]|3[01])(?:\.?[o°])?"  # "1", "13", "1º" (NFKD: "1o"), "1.º", "1°"
# Roman numerals 1..31, as a date is often written ("XV de Novembro"); matched on the casefolded text.
_DAY_ROMAN = r"(?:xxx(?:i)?|xx(?:ix|iv|v?i{0,3})|x(?:ix|iv|v?i{0,3})|ix|iv|v?i{1,3}|v)"
_MONTHS = "janeiro|fevereiro|marco|abril|maio|junho|julho|agosto|setembro|outubro|novembro|dezembro"
_DATE = re.compile(rf"(?<!\S)(?:{_DAY_DIGITS}|{_DAY_ROMAN}|{_DAY_WORDS}) de (?:{_MONTHS})(?!\S)")


def date_in_name(name: str) -> str | None:
    """Art. 17 par. ún. / Art. 32 par. ún.: the part of a name that designates a date ("Sete de Setembro"), or None."""
    words = list(_WORD.finditer(name))
    keys = [normalise_name(word.group()) for word in words]
    starts: list[int] = []
    position = 0
    for key in keys:
        starts.append(position)
        position += len(key) + 1
    match = _DATE.search(" ".join(keys))
    if match is None:
        return None
    first = max(i for i, start in enumerate(starts) if start <= match.start())
    last = max(i for i, start in enumerate(starts) if start < match.end())
    return name[words[first].start() : words[last].end()]
