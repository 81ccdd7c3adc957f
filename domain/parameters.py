"""LC 35/1991 as dated data (statute/lc35.toml): "the value in force on date D" for every legal number the domain
applies.

The data lives in `domain/statute/lc35.toml` and, for each case kind's order of acts (Art. 1, 8-40),
`domain/statute/lifecycles.toml`; this module only reads and validates it (the lifecycles' own references are
checked by `domain.lifecycle.lifecycle_problems`). A change of law appends a version with its own
`effective_from`; nothing here knows a legal number.
"""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass, field
from datetime import date, datetime, timedelta
from fractions import Fraction
from functools import cache, cached_property
from importlib import resources
from pathlib import Path
from typing import Any

from domain.errors import RuleNotInForceError, Sentence, Term

COMPARISONS = {
    ">=": lambda found, required: found >= required,
    ">": lambda found, required: found > required,
    "<=": lambda found, required: found <= required,
    "==": lambda found, required: found == required,
}
COMPARISON_WORDS = {">=": "at least", ">": "more than", "<=": "at most", "==": "exactly"}
ARTICLE_ID = re.compile(r"^(art-\d+(-[IVX]+)?(-par-unico)?|cf-art-18-par-4|lei-9784-art-66|rules-lifecycle)$")
DEADLINE_UNITS = ("days", "months", "on-installation")
#: Parameters whose value is one word of a fixed vocabulary, each word a state the domain reads: a word outside it
#: (a typo in an amendment: "clsoed") would silently mean something else, so it is refused.
#: `cf-art-18-par-4.federal-period`: "not-required" (the original art. 18 §4), "closed" (EC 15/1996 without the
#: federal complementary law), "open" (within a period that law fixes: docs/law/federal-gate.md).
VOCABULARIES = {"cf-art-18-par-4.federal-period": ("not-required", "closed", "open")}
#: The keys of a version; any other key is an `extra` its parameter's readers know (e.g. `known_through`).
VERSION_KEYS = ("id", "article", "effective_from", "value", "source", "comparison", "effective_until")


def share(value: str | int) -> Fraction:
    """Read a share written as data ("0.10", "1/2", "2/3") as an exact fraction."""
    return Fraction(str(value))


@dataclass(frozen=True)
class Parameter:
    """One version of one rule: its value, the article it cites and the day it entered into force."""

    id: str
    article: str
    effective_from: date
    value: Any
    source: str
    comparison: str | None = None
    effective_until: date | None = None
    extra: dict[str, Any] = field(default_factory=dict)
    #: Who gave the statute this version: None for the shipped data, else the amendment (`domain/amendments.py`).
    introduced_by: dict[str, Any] | None = field(default=None, compare=False)

    @cached_property
    def version(self) -> str:
        """The identifier events record as "the rule version used" (made once: several times per act)."""
        return f"{self.id}@{self.effective_from.isoformat()}"

    def holds(self, found: Any, required: Any | None = None) -> bool:
        """Judge `found` against `required` (default: the value) with this rule's comparison."""
        if self.comparison is None:
            raise ValueError(f"{self.id} has no comparison")
        return COMPARISONS[self.comparison](found, self.value if required is None else required)

    @property
    def comparison_words(self) -> Term:
        """The comparison in words (`at least`), a term of the refusals' vocabulary."""
        return Term(COMPARISON_WORDS[self.comparison or "=="])


class Statute:
    """The dated parameters of the statute, looked up by id and date."""

    def __init__(self, document: dict[str, Any]) -> None:
        self.version: str = document["version"]
        self.sources: dict[str, str] = document.get("sources", {})
        self._versions: dict[str, list[Parameter]] = {}
        for entry in document.get("parameter", []):
            parameter = parameter_of(entry)
            self._versions.setdefault(parameter.id, []).append(parameter)
        for versions in self._versions.values():
            versions.sort(key=lambda p: p.effective_from)
        #: The amendments recorded on top of the shipped data (`amended`), oldest first.
        self.amendments: list[dict[str, Any]] = []

    @classmethod
    def load(cls, path: Path | None = None, *more: Path) -> Statute:
        """The statute read from `path` (and `more` files, whose parameters join the first's); None: the shipped."""
        if path is None:
            return shipped_statute()
        documents = []
        for each in (path, *more):
            with open(each, "rb") as file:
                documents.append(tomllib.load(file))
        return cls(merged(documents))

    def amended(self, amendments: list[dict[str, Any]]) -> Statute:
        """This statute with `amendments` applied in order: each entry of an amendment's `parameters` adds a
        version, or replaces the version of the same id and `effective_from`. `self` is left as it was."""
        statute = Statute({"version": self.version, "sources": dict(self.sources)})
        statute._versions = {key: list(versions) for key, versions in self._versions.items()}
        statute.amendments = [*self.amendments]
        for amendment in amendments:
            statute.sources.update(amendment.get("sources") or {})
            introduced_by = {key: amendment[key] for key in ("number", "law", "published_on", "recorded_at",
                                                            "hash") if key in amendment}
            for entry in amendment["parameters"]:
                parameter = parameter_of(entry, introduced_by)
                versions = statute._versions.setdefault(parameter.id, [])
                versions[:] = [p for p in versions if p.effective_from != parameter.effective_from]
                versions.append(parameter)
                versions.sort(key=lambda p: p.effective_from)
            statute.amendments.append(amendment)
        return statute

    def ids(self) -> list[str]:
        return sorted(self._versions)

    def versions(self, parameter_id: str) -> list[Parameter]:
        return list(self._versions.get(parameter_id, []))

    def in_force(self, parameter_id: str, on: date) -> Parameter:
        """The version of `parameter_id` in force on `on`; refused with its article when none is."""
        versions = self._versions.get(parameter_id)
        if not versions:
            raise KeyError(f"no statute parameter {parameter_id!r}")
        current = None
        for parameter in versions:
            if parameter.effective_from <= on:
                current = parameter
        if current is None or (current.effective_until is not None and on > current.effective_until):
            first = versions[0]
            raise RuleNotInForceError(
                first.article,
                Sentence("no version of %(parameter)s is in force on %(on)s (the first entered into force on "
                         "%(first)s)", parameter=parameter_id, on=on.isoformat(),
                         first=first.effective_from.isoformat()),
                parameter=parameter_id,
                on=on.isoformat(),
            )
        return current

    def value(self, parameter_id: str, on: date) -> Any:
        return self.in_force(parameter_id, on).value

    def validate(self) -> list[str]:
        """Every problem with the data, as sentences; empty when the data is sound."""
        problems: list[str] = []
        for parameter_id, versions in self._versions.items():
            for parameter in versions:
                where = parameter.version
                if not ARTICLE_ID.match(parameter.article):
                    problems.append(f"{where}: article {parameter.article!r} is not an article id")
                if not isinstance(parameter.effective_from, date):
                    problems.append(f"{where}: effective_from is not a date")
                if not parameter.source.strip():
                    problems.append(f"{where}: no source")
                if parameter.comparison is not None and parameter.comparison not in COMPARISONS:
                    problems.append(f"{where}: unknown comparison {parameter.comparison!r}")
                until = parameter.effective_until
                if until is not None and until < parameter.effective_from:
                    problems.append(f"{where}: effective_until before effective_from")
                if parameter_id.startswith("deadline.") and parameter_id != "deadline.counting-convention":
                    problems.extend(_deadline_problems(parameter))
                words = VOCABULARIES.get(parameter_id)
                if words is not None and parameter.value not in words:
                    problems.append(f"{where}: value {parameter.value!r} is not one of {', '.join(words)}")
                problems.extend(f"{where}: {problem}" for problem in _plain_data_problems(parameter.value, "value"))
                if parameter is not versions[0]:
                    problems.extend(f"{where}: {problem}"
                                    for problem in _shape_problems(parameter.value, versions[0].value, "value"))
            for earlier, later in zip(versions, versions[1:]):
                if later.effective_from <= earlier.effective_from:
                    problems.append(f"{parameter_id}: two versions start on {later.effective_from}")
                if earlier.effective_until is not None:
                    if earlier.effective_until >= later.effective_from:
                        problems.append(f"{parameter_id}: {earlier.version} overlaps {later.version}")
                    elif earlier.effective_until + timedelta(days=1) != later.effective_from:
                        problems.append(f"{parameter_id}: gap between {earlier.version} and {later.version}")
        return problems


def parameter_of(entry: dict[str, Any], introduced_by: dict[str, Any] | None = None) -> Parameter:
    """One version from its entry in the data (a `[[parameter]]` table, or an amendment's entry)."""
    return Parameter(id=entry["id"], article=entry["article"], effective_from=entry["effective_from"],
                     value=entry["value"], source=entry["source"], comparison=entry.get("comparison"),
                     effective_until=entry.get("effective_until"),
                     extra={k: v for k, v in entry.items() if k not in VERSION_KEYS}, introduced_by=introduced_by)


def plain_text(text: str) -> bool:
    """Text without a control character (C0, DEL, C1) and without a lone surrogate (which cannot be encoded)."""
    return not any(ord(c) < 32 or 127 <= ord(c) < 160 or 0xD800 <= ord(c) <= 0xDFFF for c in text)


def _plain_data_problems(value: Any, where: str) -> list[str]:
    """A value is text, whole numbers, booleans, dates, lists and tables of them: a float is refused (a share is
    written as text, "0.10", and read exactly), and so is text with a control character."""
    if isinstance(value, float):
        return [f"{where} {value!r} is a float: write a share or a decimal as text, in quotes"]
    if isinstance(value, str):
        return [] if plain_text(value) else [f"{where} has a control character or a lone surrogate"]
    if isinstance(value, list):
        return [p for i, item in enumerate(value) for p in _plain_data_problems(item, f"{where}[{i}]")]
    if isinstance(value, dict):
        return [p for key, item in value.items()
                for p in (_plain_data_problems(key, f"{where} key") if isinstance(key, str) else
                          [f"{where} key {key!r} is not text"]) + _plain_data_problems(item, f"{where}.{key}")]
    if value is None or isinstance(value, (bool, int, date)) and not isinstance(value, datetime):
        return []
    return [f"{where} is a {type(value).__name__}: not text, a whole number, a boolean, a date, a list or a table"]


def _kind(value: Any) -> str:
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, str):
        return "a share" if _is_share(value) else "text"
    return {int: "a whole number", date: "a date", list: "a list",
            dict: "a table"}.get(type(value), type(value).__name__)


def _is_share(text: str) -> bool:
    try:
        share(text)
    except (ValueError, ZeroDivisionError):
        return False
    return True


def _shape_problems(value: Any, like: Any, where: str) -> list[str]:
    """A later version has the shape of the parameter's first (the domain reads every version alike): the same
    kind of value, a share where it held a share, the same kind of items in a list and under a table's keys."""
    if _kind(value) != _kind(like):
        return [f"{where} is {_kind(value)} where the parameter holds {_kind(like)}"]
    if isinstance(value, list) and like:
        return [p for i, item in enumerate(value) for p in _shape_problems(item, like[0], f"{where}[{i}]")][:1]
    if isinstance(value, dict):
        return [p for key, item in value.items() if key in like for p in _shape_problems(item, like[key],
                                                                                          f"{where}.{key}")]
    return []


def _deadline_problems(parameter: Parameter) -> list[str]:
    value = parameter.value
    problems = []
    if not isinstance(value, dict) or {"length", "unit", "starts", "who"} - set(value):
        return [f"{parameter.version}: a deadline needs length, unit, starts and who"]
    if value["unit"] not in DEADLINE_UNITS:
        problems.append(f"{parameter.version}: unknown unit {value['unit']!r}")
    if not isinstance(value["length"], int) or value["length"] < 0:
        problems.append(f"{parameter.version}: length must be a whole number of days or months")
    return problems


#: The statute files shipped with the package: LC 35/1991's parameters, then each case kind's lifecycle.
SHIPPED_FILES = ("lc35.toml", "lifecycles.toml")


def merged(documents: list[dict[str, Any]]) -> dict[str, Any]:
    """One statute document from several: the first's version, every file's sources and parameters."""
    return {"version": documents[0]["version"],
            "sources": {k: v for d in documents for k, v in d.get("sources", {}).items()},
            "parameter": [p for d in documents for p in d.get("parameter", [])]}


@cache
def shipped_statute() -> Statute:
    """The statute data shipped with the package (read once per process)."""
    documents = []
    for name in SHIPPED_FILES:
        with resources.files("domain.statute").joinpath(name).open("rb") as file:
            documents.append(tomllib.load(file))
    return Statute(merged(documents))
