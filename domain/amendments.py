"""Amendments of the statute, recorded as acts: new versions of its parameters, judged as the shipped data is.

The statute's parameters ship as dated data (`domain/statute/*.toml`). When a law changes one of them (Acre
amends LC 35/1991; the Union publishes the complementary law CF art. 18 §4 asks for), the Assembly's Mesa (or
the operator, from the command line) records the amendment: the law, the day it was published, and the new
versions, each with its `effective_from`, article and source. The amendment is an event of the
`StatuteAmendments` aggregate, so it is hash-chained, signed and in the audit log like every act, and every
process builds the statute in force from the shipped data plus the amendments recorded.

An amendment is refused, naming the entry and changing nothing, when (`amendment_problems`):
- an entry is malformed: a field missing or of the wrong type, no source, a parameter the statute does not
  have, a value not shaped like the parameter's versions, or a word outside its vocabulary;
- the statute it would make is not sound (`Statute.validate`, `lifecycle_problems`: gaps, overlaps, two
  versions of one day, a lifecycle that refers to nothing);
- it would change what an act already judged: a version some decision applied cannot be replaced, and a new
  version cannot start on or before the last day a decision applied the version it supersedes. A decision
  records the versions it used (`rule_versions`); the lifecycle and competence tables, which every act consults
  without recording them, are taken as applied on every act's legal date. So a decision keeps its version, and
  reading an old case after an amendment gives the same verdicts.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import date
from typing import Any
from uuid import NAMESPACE_URL, uuid5

from domain.errors import Listing, Sentence
from domain.acts import ActContext, ChainedAggregate
from domain.parameters import VERSION_KEYS, Parameter, Statute, plain_text

#: The parameters every act consults without recording the version in its event: an amendment of one of them is
#: judged against the legal date of every act (the others, against the decisions that recorded the version).
CONSULTED_BY_EVERY_ACT = ("lifecycle.", "competence.")
#: The act's name in the competence tables, and the article id its events record (a product act, not LC 35's).
ACT, ARTICLE = "statute-amended", "statute-amendment"
REQUIRED_KEYS = ("id", "article", "effective_from", "value", "source")


@dataclass
class Applied:
    """What the recorded acts applied: per version (`id@date`), the last legal date a decision recorded it, and the
    last legal date of any act (for the tables every act consults). Each with where it was found."""

    versions: dict[str, tuple[date, str]] = field(default_factory=dict)
    any_act: tuple[date, str] | None = None

    def note(self, occurred_on: date, rule_versions: dict[str, str], where: str, *, every_act: bool = True) -> None:
        """An event of `where` on its legal date, with the versions it recorded; `every_act`: it is an act that
        consulted the tables every act consults (not an alert, a receipt or an amendment)."""
        for version in rule_versions.values():
            last = self.versions.get(version)
            if last is None or occurred_on > last[0]:
                self.versions[version] = (occurred_on, where)
        if every_act and (self.any_act is None or occurred_on > self.any_act[0]):
            self.any_act = (occurred_on, where)

    def last_use(self, parameter_id: str, version: str) -> tuple[date, str] | None:
        """The last legal date (and act) on which `version` of `parameter_id` was applied, or None."""
        if parameter_id.startswith(CONSULTED_BY_EVERY_ACT):
            return self.any_act
        return self.versions.get(version)


def conformed(value: Any, like: Any) -> Any:
    """`value` as sent in JSON, with a date written as text (`"2027-03-01"`) where the parameter holds a date."""
    if isinstance(like, date) and isinstance(value, str):
        try:
            return date.fromisoformat(value) if len(value) == 10 else value
        except ValueError:
            return value
    if isinstance(value, list) and isinstance(like, list) and like:
        return [conformed(item, like[0]) for item in value]
    if isinstance(value, dict) and isinstance(like, dict):
        return {key: conformed(item, like[key]) if key in like else item for key, item in value.items()}
    return value


def amendment_problems(statute: Statute, law: Any, sources: Any, entries: Any, applied: Applied,
                       lifecycle_check: Any = None) -> tuple[list[dict[str, Any]], dict[str, list[str]]]:
    """Judge an amendment against the statute in force and what acts applied: its entries as they will be
    recorded (dates read, values conformed) and the problems by entry (empty: the amendment may be recorded).

    `lifecycle_check(statute)` returns the problems of the lifecycle data of a statute (domain.lifecycle's)."""
    problems: dict[str, list[str | Sentence]] = {}
    if not _is_text(law):
        problems["law"] = [Sentence("the amending law is required: its name, number and date (e.g. \"Lei "
                                    "Complementar nº 200, de 1º de março de 2027\")")]
    if sources is not None and (not isinstance(sources, dict)
                                or not all(_is_text(k) and _is_text(v) for k, v in sources.items())):
        problems["sources"] = [Sentence("sources map a short name to the text that cites it, both text")]
    entries_out: list[dict[str, Any]] = []
    if not isinstance(entries, list) or not entries:
        problems["parameters"] = [Sentence("an amendment gives at least one new version of a parameter")]
        return [], problems
    seen: set[tuple[str, date]] = set()
    for index, entry in enumerate(entries):
        key = f"parameters[{index}]"
        found = _entry_problems(statute, entry, seen)
        if found:
            problems[key] = found
            continue
        versions = statute.versions(entry["id"])
        entry = {k: v for k, v in entry.items() if v is not None}  # an optional field sent empty is absent
        entry = {**entry, "value": conformed(entry["value"], versions[0].value),
                 **{k: conformed(v, versions[0].extra[k]) for k, v in entry.items() if k in versions[0].extra}}
        found = _applied_problems(statute, entry, applied)
        if found:
            problems[key] = found
        entries_out.append(entry)
    if problems:
        return entries_out, problems
    after = statute.amended([{"parameters": entries_out}])
    touched = {entry["id"] for entry in entries_out}
    for problem in after.validate():
        index = _entry_named(entries_out, problem)
        problems.setdefault(f"parameters[{index}]" if index is not None else "parameters", []).append(problem)
    if lifecycle_check is not None and any(i.startswith(CONSULTED_BY_EVERY_ACT) for i in touched):
        for problem in lifecycle_check(after):
            problems.setdefault("parameters", []).append(problem)
    return entries_out, problems


def _is_text(value: Any) -> bool:
    """Text with something in it and no control character."""
    return isinstance(value, str) and bool(value.strip()) and plain_text(value)


def _entry_problems(statute: Statute, entry: Any, seen: set[tuple[str, date]]) -> list[Sentence]:
    """What is wrong with the entry on its own (its fields), before the statute it would make is judged."""
    if not isinstance(entry, dict):
        return [Sentence("an entry is a table of id, article, effective_from, value and source")]
    missing = [k for k in REQUIRED_KEYS if k not in entry or entry[k] is None]
    if missing:
        return [Sentence("%(fields)s is required", fields=missing[0]) if len(missing) == 1 else
                Sentence("%(fields)s are required", fields=Listing(missing))]
    parameter_id = entry["id"]
    if not isinstance(parameter_id, str) or not statute.versions(parameter_id):
        return [Sentence("the statute has no parameter %(parameter)r: an amendment gives new versions to the "
                         "parameters the domain applies (GET /statute lists them)", parameter=parameter_id)]
    found = []
    extra_keys = set(statute.versions(parameter_id)[0].extra)
    unknown = sorted(set(entry) - set(VERSION_KEYS) - extra_keys)
    if unknown:
        found.append(Sentence("unknown fields %(fields)s", fields=Listing(unknown)) if len(unknown) > 1 else
                     Sentence("unknown field %(fields)s", fields=Listing(unknown)))
    for name in ("effective_from", "effective_until"):
        if name in entry and entry[name] is not None and type(entry[name]) is not date:
            found.append(Sentence("%(name)s %(entry)r is not a date (YYYY-MM-DD)", name=name, entry=entry[name]))
    for name in ("article", "source", "comparison"):
        if name in entry and entry[name] is not None and not _is_text(entry[name]):
            found.append(Sentence("%(name)s must be text: the law and its publication", name=name) if name == "source"
                         else Sentence("%(name)s must be text", name=name))
    if not found:
        day = entry["effective_from"]
        if (parameter_id, day) in seen:
            found.append(Sentence(
                "a second version of %(parameter_id)s starting on %(day)s in the same amendment",
                parameter_id=parameter_id, day=day.isoformat()))
        seen.add((parameter_id, day))
    return found


def _applied_problems(statute: Statute, entry: dict[str, Any], applied: Applied) -> list[Sentence]:
    """The entry would change what a recorded act judged: the version it replaces, or the part of the version it
    supersedes from `effective_from` on, was applied by a decision (the version's, or any act's for the tables)."""
    parameter_id, day = entry["id"], entry["effective_from"]
    versions = statute.versions(parameter_id)
    replaced = next((v for v in versions if v.effective_from == day), None)
    if replaced is not None and _same(replaced, entry):
        return [Sentence("%(version)s is already in the statute as given: the amendment would change nothing",
                         version=replaced.version)]
    changed = replaced or next((v for v in reversed(versions) if v.effective_from < day), None)
    use = applied.last_use(parameter_id, changed.version) if changed is not None else None
    if use is None or use[0] < day:
        return []
    if changed is replaced:
        return [Sentence("%(version)s is already applied: %(act)s was judged under it on %(on)s; a version a decision "
                         "used is never changed (give a new version from a later day)", version=changed.version,
                         act=use[1], on=use[0].isoformat())]
    return [Sentence("%(parameter)s from %(day)s would change the version in force on %(on)s, when %(act)s was "
                     "judged under %(version)s; a new version starts after the last day a decision applied the one "
                     "it supersedes", parameter=parameter_id, day=day.isoformat(), on=use[0].isoformat(), act=use[1],
                     version=changed.version)]


def _same(version: Parameter, entry: dict[str, Any]) -> bool:
    return (version.article, version.value, version.source, version.comparison, version.effective_until,
            version.extra) == (entry["article"], entry["value"], entry["source"], entry.get("comparison"),
                               entry.get("effective_until"), {k: v for k, v in entry.items() if k not in VERSION_KEYS})


def _entry_named(entries: list[dict[str, Any]], problem: str) -> int | None:
    """The index of the entry a validation problem names (by `id@date`, else by id), if any."""
    for index, entry in enumerate(entries):
        if problem.startswith(f"{entry['id']}@{entry['effective_from'].isoformat()}"):
            return index
    for index, entry in enumerate(entries):
        if problem.startswith(f"{entry['id']}:") or problem.startswith(f"{entry['id']}@"):
            return index
    return None


class StatuteAmendments(ChainedAggregate):
    """The statute's amendments, in the order they were recorded (one aggregate: two amendments recorded at once
    conflict in the store, and the second is judged again on the statute the first made)."""

    ID = uuid5(NAMESPACE_URL, "urn:tramita:statute-amendments")

    class Opened(ChainedAggregate.Created):
        def assign(self, book: StatuteAmendments) -> None:
            book.amendments = []

    class Amended(ChainedAggregate.Event):
        """A law changed the statute: its name, the sources it adds and the parameter versions it gives."""

        law: str
        sources: dict[str, str]
        parameters: list[dict[str, Any]]

        def assign(self, book: StatuteAmendments) -> None:
            book.amendments.append({"number": len(book.amendments) + 1, "law": self.law,
                                    "published_on": self.occurred_on, "sources": dict(self.sources),
                                    "parameters": list(self.parameters), "recorded_at": self.timestamp,
                                    "actor": dict(self.actor), "hash": self.hash})

    @classmethod
    def open(cls, ctx: ActContext) -> StatuteAmendments:
        return cls._start(cls.Opened, ctx, id=cls.ID, article=ARTICLE)

    def amend(self, ctx: ActContext, *, law: str, sources: dict[str, str], parameters: list[dict[str, Any]],
              rule_versions: dict[str, str]) -> None:
        """Record an amendment already judged sound (`amendment_problems`) by the competent body."""
        self._record(self.Amended, ctx, article=ARTICLE, rule_versions=rule_versions, law=law, sources=sources,
                     parameters=parameters)
