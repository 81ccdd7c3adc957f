"""LC 35/1991 as dated data (statute/lc35.toml): "the value in force on date D" for every legal number the domain applies.

The data lives in `domain/statute/lc35.toml` and, for each case kind's order of acts (Art. 1, 8-40),
`domain/statute/lifecycles.toml`; this module only reads and validates it (the lifecycles' own references are
checked by `domain.lifecycle.lifecycle_problems`). A change of law appends a version with its own
`effective_from`; nothing here knows a legal number.
"""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass, field
from datetime import date, timedelta
from fractions import Fraction
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any

from domain.errors import RuleNotInForceError

COMPARISONS = {
    ">=": lambda found, required: found >= required,
    ">": lambda found, required: found > required,
    "<=": lambda found, required: found <= required,
    "==": lambda found, required: found == required,
}
COMPARISON_WORDS = {">=": "at least", ">": "more than", "<=": "at most", "==": "exactly"}
ARTICLE_ID = re.compile(r"^(art-\d+(-[IVX]+)?(-par-unico)?|cf-art-18-par-4|lei-9784-art-66|rules-lifecycle)$")
DEADLINE_UNITS = ("days", "months", "on-installation")


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

    @property
    def version(self) -> str:
        """The identifier events record as "the rule version used"."""
        return f"{self.id}@{self.effective_from.isoformat()}"

    def holds(self, found: Any, required: Any | None = None) -> bool:
        """Judge `found` against `required` (default: the value) with this rule's comparison."""
        if self.comparison is None:
            raise ValueError(f"{self.id} has no comparison")
        return COMPARISONS[self.comparison](found, self.value if required is None else required)

    @property
    def comparison_words(self) -> str:
        return COMPARISON_WORDS[self.comparison or "=="]


class Statute:
    """The dated parameters of the statute, looked up by id and date."""

    def __init__(self, document: dict[str, Any]) -> None:
        self.version: str = document["version"]
        self.sources: dict[str, str] = document.get("sources", {})
        self._versions: dict[str, list[Parameter]] = {}
        for entry in document.get("parameter", []):
            known = {"id", "article", "effective_from", "value", "source", "comparison", "effective_until"}
            parameter = Parameter(
                id=entry["id"],
                article=entry["article"],
                effective_from=entry["effective_from"],
                value=entry["value"],
                source=entry["source"],
                comparison=entry.get("comparison"),
                effective_until=entry.get("effective_until"),
                extra={k: v for k, v in entry.items() if k not in known},
            )
            self._versions.setdefault(parameter.id, []).append(parameter)
        for versions in self._versions.values():
            versions.sort(key=lambda p: p.effective_from)

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
                f"no version of {parameter_id} is in force on {on.isoformat()} "
                f"(the first entered into force on {first.effective_from.isoformat()})",
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
            for earlier, later in zip(versions, versions[1:]):
                if later.effective_from <= earlier.effective_from:
                    problems.append(f"{parameter_id}: two versions start on {later.effective_from}")
                if earlier.effective_until is not None:
                    if earlier.effective_until >= later.effective_from:
                        problems.append(f"{parameter_id}: {earlier.version} overlaps {later.version}")
                    elif earlier.effective_until + timedelta(days=1) != later.effective_from:
                        problems.append(f"{parameter_id}: gap between {earlier.version} and {later.version}")
        return problems


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
