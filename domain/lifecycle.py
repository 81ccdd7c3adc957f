"""Art. 1, 8-40 (order of acts): each case kind's lifecycle as dated, cited statute data, its model and its checks.

The data lives in `domain/statute/lifecycles.toml`, loaded with the statute's other parameters: `lifecycle.<kind>`
(one per case kind, a later version superseding from its own `effective_from`), `lifecycle.acts` (the catalogue
of acts: label, article, the Case event that records it) and `lifecycle.steps` (the steps several kinds take alike,
written once, which a kind's step names by `uses`). This module reads and validates that data, a kind's steps with
the shared steps they use in force on the day asked; the case (`domain.case.admission`) enforces it and says what
may come next, `domain.lifecycle_diagrams` draws it.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date
from functools import cached_property
from typing import Any

from domain.parameters import ARTICLE_ID, Parameter, Statute

#: Which municipality's body records an act that is by a municipality (the case's territories, its origins, the
#: municipality of a district case, the municipality a creation or fusion law made).
BY = ("territory", "origin", "municipality", "new-municipality")
#: The keys a step may have (lifecycles.toml's header says what each means).
STEP_KEYS = {"act", "article", "ordered_by", "after", "after_any", "when", "unmet_citing", "until", "closed_citing",
             "unless", "once", "by", "opens", "closes", "note"}
#: The catalogue of acts and the shared steps: the parameters `lifecycle.*` that are no kind's lifecycle.
CATALOGUE, SHARED = "lifecycle.acts", "lifecycle.steps"


@dataclass(frozen=True)
class Step:
    """One act of a lifecycle: admissible after its acts and conditions, until its stage has passed."""

    act: str
    article: str
    ordered_by: str
    after: tuple[str, ...] = ()
    after_any: tuple[str, ...] = ()
    when: tuple[str, ...] = ()
    #: The article cited when a `when` condition does not hold (None: the condition's own article).
    unmet_citing: str | None = None
    until: tuple[str, ...] = ()
    #: The article cited when an `until` act has closed the step (None: that act's article).
    closed_citing: str | None = None
    unless: tuple[str, ...] = ()
    once: bool = False
    by: str | None = None
    opens: tuple[str, ...] = ()
    closes: tuple[str, ...] = ()
    note: str = ""

    @property
    def per_municipality(self) -> bool:
        """Done once for each of several municipalities (each council, each origin), not once for the case."""
        return self.by in ("territory", "origin")


@dataclass(frozen=True)
class Condition:
    """A named condition a lifecycle refers to: the article that requires it and, in plain words, what it requires."""

    name: str
    article: str
    requires: str


@dataclass(frozen=True)
class Exclusion:
    """An act deliberately absent from a kind's lifecycle, with the article that excludes it and why."""

    act: str
    article: str
    reason: str


@dataclass(frozen=True)
class ActEntry:
    """One act of the catalogue: its plain label, its article when no lifecycle orders it, its Case event."""

    act: str
    label: str
    article: str
    event: str
    competence: str = "competence.act"


@dataclass(frozen=True)
class Lifecycle:
    """A case kind's order of acts in one version: its steps, conditions, final acts and exclusions."""

    kind: str
    version: str
    effective_from: date
    article: str
    source: str
    steps: tuple[Step, ...]
    conditions: dict[str, Condition]
    ends: tuple[str, ...]
    ends_when: tuple[str, ...]
    excluded: dict[str, Exclusion]

    @property
    def opening(self) -> Step:
        return self.steps[0]

    def step(self, act: str) -> Step | None:
        return next((s for s in self.steps if s.act == act), None)

    @property
    def acts(self) -> list[str]:
        return [s.act for s in self.steps]

    @cached_property
    def closers(self) -> dict[str, tuple[Step, ...]]:
        """For each deadline, the steps whose act closes it (`closes`)."""
        found: dict[str, list[Step]] = {}
        for step in self.steps:
            for rule in step.closes:
                found.setdefault(rule, []).append(step)
        return {rule: tuple(steps) for rule, steps in found.items()}


def shared_steps(shared: Parameter | None) -> dict[str, dict[str, Any]]:
    """One `lifecycle.steps` version's steps by name (each as written, without its name); none without one."""
    return {} if shared is None else {s["name"]: {k: v for k, v in s.items() if k != "name"}
                                      for s in shared.value.get("step", [])}


def uses_shared(parameter: Parameter) -> bool:
    """Whether a kind's lifecycle version names a shared step (`uses`)."""
    return any("uses" in s for s in parameter.value.get("step", []))


def lifecycle_from(parameter: Parameter, shared: Parameter | None = None) -> Lifecycle:
    """Read one `lifecycle.<kind>` version (its value as the TOML gives it), each step that `uses` a shared step
    being that step of `shared` (the `lifecycle.steps` version in force); in force from the later of the two."""
    value = parameter.value
    named = shared_steps(shared)

    def names(entry: dict[str, Any], key: str) -> tuple[str, ...]:
        return tuple(entry.get(key, ()))

    written = [named[s["uses"]] if "uses" in s else s for s in value.get("step", [])]
    steps = tuple(Step(act=s["act"], article=s["article"], ordered_by=s.get("ordered_by", s["article"]),
                       after=names(s, "after"), after_any=names(s, "after_any"), when=names(s, "when"),
                       unmet_citing=s.get("unmet_citing"), until=names(s, "until"),
                       closed_citing=s.get("closed_citing"), unless=names(s, "unless"), once=bool(s.get("once", False)),
                       by=s.get("by"), opens=names(s, "opens"), closes=names(s, "closes"), note=s.get("note", ""))
                  for s in written)
    conditions = {name: Condition(name, c["article"], c["requires"]) for name, c in value.get("conditions", {}).items()}
    excluded = {e["act"]: Exclusion(e["act"], e["article"], e["reason"]) for e in value.get("excluded", [])}
    since = parameter.effective_from if shared is None else max(parameter.effective_from, shared.effective_from)
    return Lifecycle(kind=parameter.id.removeprefix("lifecycle."), version=parameter.version,
                     effective_from=since, article=parameter.article, source=parameter.source,
                     steps=steps, conditions=conditions, ends=tuple(value.get("ends", ())),
                     ends_when=tuple(value.get("ends_when", ())), excluded=excluded)


def _cache(statute: Statute) -> dict[str, Any]:
    """Parsed lifecycles kept on the statute object they were read from (a statute's data never changes)."""
    cache = statute.__dict__.get("_lifecycle_cache")
    if cache is None:
        cache = statute.__dict__["_lifecycle_cache"] = {}
    return cache


def lifecycle_of(statute: Statute, kind: str, on: date) -> Lifecycle:
    """The lifecycle of `kind` in force on `on`, with the shared steps in force that day (RuleNotInForceError with
    its article when none is)."""
    parameter = statute.in_force(f"lifecycle.{kind}", on)
    cache = _cache(statute)
    uses = cache.get(("uses", parameter.version))
    if uses is None:  # whether this version names a shared step: read once per version
        uses = cache[("uses", parameter.version)] = uses_shared(parameter)
    shared = statute.in_force(SHARED, on) if uses else None
    key = parameter.version if shared is None else (parameter.version, shared.version)
    if key not in cache:
        cache[key] = lifecycle_from(parameter, shared)
    return cache[key]


def lifecycle_versions(statute: Statute, kind: str) -> list[Lifecycle]:
    """Every version of `kind`'s lifecycle, oldest first: one from each version of its own, and one more from each
    later version of the shared steps it uses."""
    own = statute.versions(f"lifecycle.{kind}")
    days = {p.effective_from for p in own}
    if any(uses_shared(p) for p in own):
        days |= {p.effective_from for p in statute.versions(SHARED) if p.effective_from > own[0].effective_from}
    found: list[Lifecycle] = []
    for day in sorted(days):
        lifecycle = lifecycle_of(statute, kind, day)
        if not found or lifecycle is not found[-1]:
            found.append(lifecycle)
    return found


def lifecycle_kinds(statute: Statute) -> list[str]:
    return [pid.removeprefix("lifecycle.") for pid in statute.ids() if pid.startswith("lifecycle.")
            and pid not in (CATALOGUE, SHARED)]


def act_catalogue(statute: Statute, on: date) -> dict[str, ActEntry]:
    """The catalogue of acts in force on `on`: act -> label, article, Case event, competence table."""
    parameter = statute.in_force(CATALOGUE, on)
    cache = _cache(statute)
    key = ("acts", parameter.version)
    if key not in cache:  # read on every act and every case document: parsed once per version
        cache[key] = {act: ActEntry(act, e["label"], e["article"], e["event"], e.get("competence", "competence.act"))
                      for act, e in parameter.value.items()}
    return cache[key]


# ---------------------------------------------------------------------- validation


def lifecycle_problems(statute: Statute, *, kinds: tuple[str, ...] | None = None,
                       conditions: set[str] | None = None, events: set[str] | None = None) -> list[str]:
    """Every problem with the lifecycle data, as sentences; empty when it is sound.

    `kinds` (the case kinds), `conditions` (the names the domain can evaluate) and `events` (the Case event
    classes) are checked when given.
    """
    problems: list[str] = []
    if CATALOGUE not in statute.ids():
        return ["no lifecycle.acts catalogue"]
    problems += _shared_problems(statute)
    found = lifecycle_kinds(statute)
    for kind in kinds or ():
        if kind not in found:
            problems.append(f"no lifecycle for the case kind {kind!r}")
    for kind in found:
        if kinds is not None and kind not in kinds:
            problems.append(f"lifecycle.{kind} is not a case kind")
        written = []
        own = statute.versions(f"lifecycle.{kind}")
        for parameter, following in zip(own, [*own[1:], None]):
            until = following.effective_from if following is not None else None
            for step in parameter.value.get("step", []):
                written += _written_step_problems(statute, parameter, step, until)
        problems += written
        if written:  # a step that is not one cannot be read: the lifecycle's own checks would not run
            continue
        for lifecycle in lifecycle_versions(statute, kind):
            catalogue = act_catalogue(statute, lifecycle.effective_from)
            problems += _catalogue_problems(statute, lifecycle.effective_from, catalogue, events)
            problems += _lifecycle_problems(statute, lifecycle, catalogue, conditions)
    return sorted(set(problems))


def _shared_problems(statute: Statute) -> list[str]:
    """The shared steps' own problems: each named once, with an act and an article, and only a step's keys."""
    problems = []
    for parameter in statute.versions(SHARED):
        seen: set[str] = set()
        for step in parameter.value.get("step", []):
            name = step.get("name")
            where = f"{parameter.version} {name}"
            if not isinstance(name, str) or not name.strip():
                problems.append(f"{parameter.version} {step.get('act')}: a shared step has a name")
            elif name in seen:
                problems.append(f"{where}: named twice")
            seen.add(name)
            unknown = set(step) - STEP_KEYS - {"name"}
            if unknown:
                problems.append(f"{where}: unknown keys {', '.join(sorted(unknown))}")
            if "act" not in step or "article" not in step:
                problems.append(f"{where}: a step names its act and its article")
    return problems


def _written_step_problems(statute: Statute, parameter: Parameter, step: dict[str, Any],
                           until: date | None) -> list[str]:
    """A kind's step as written: its own keys, or `uses` alone naming a shared step of every version of the shared
    steps in force while `parameter` is (from its `effective_from` until the next version's, `until`)."""
    if "uses" not in step:
        unknown = set(step) - STEP_KEYS
        missing = {"act", "article"} - set(step)
        return ([f"{parameter.version} {step.get('act')}: unknown keys {', '.join(sorted(unknown))}"] if unknown
                else []) + ([f"{parameter.version} {step.get('act')}: no {' and no '.join(sorted(missing))}"]
                            if missing else [])
    name = step["uses"]
    if set(step) != {"uses"}:
        return [f"{parameter.version} uses {name!r}: a step that uses a shared step says nothing else "
                f"({', '.join(sorted(set(step) - {'uses'}))})"]
    versions = statute.versions(SHARED)
    if not versions or versions[0].effective_from > parameter.effective_from:
        return [f"{parameter.version} uses {name!r}: no {SHARED} is in force on {parameter.effective_from.isoformat()}"]
    later = [v for v in versions if v.effective_from > parameter.effective_from
             and (until is None or v.effective_from < until)]
    in_force = [v for v in versions if v.effective_from <= parameter.effective_from][-1:] + later
    return [f"{parameter.version} uses {name!r}: not a shared step of {v.version}" for v in in_force
            if name not in shared_steps(v)]


def _catalogue_problems(statute: Statute, on: date, catalogue: dict[str, ActEntry],
                        events: set[str] | None) -> list[str]:
    problems = []
    for entry in catalogue.values():
        where = f"lifecycle.acts {entry.act}"
        if not ARTICLE_ID.match(entry.article):
            problems.append(f"{where}: article {entry.article!r} is not an article id")
        if events is not None and entry.event not in events:
            problems.append(f"{where}: {entry.event!r} is not an event of the case")
        if entry.competence not in statute.ids():
            problems.append(f"{where}: no competence table {entry.competence!r}")
        elif entry.competence == "competence.act" and entry.act not in statute.value("competence.act", on):
            problems.append(f"{where}: no competence.act entry on {on.isoformat()}")
        if not entry.label.strip():
            problems.append(f"{where}: no label")
    return problems


def _lifecycle_problems(statute: Statute, lifecycle: Lifecycle, catalogue: dict[str, ActEntry],
                        conditions: set[str] | None) -> list[str]:
    where = lifecycle.version
    problems = []
    acts = lifecycle.acts
    if not lifecycle.source.startswith(f"docs/law/lifecycles.md#{anchor_of(lifecycle.kind)}"):
        problems.append(f"{where}: its source is not docs/law/lifecycles.md#{anchor_of(lifecycle.kind)}")
    if not lifecycle.steps:
        return problems + [f"{where}: no steps"]
    if len(set(acts)) != len(acts):
        problems.append(f"{where}: an act appears twice")
    opening = lifecycle.opening
    if opening.after or opening.after_any or opening.when or not opening.once:
        problems.append(f"{where}: the first step {opening.act} (the opening) follows nothing and is done once")
    for step in lifecycle.steps[1:]:
        if not (step.after or step.after_any):
            problems.append(f"{where}: {step.act} follows no act")
    for step in lifecycle.steps:
        at = f"{where} {step.act}"
        if step.act not in catalogue:
            problems.append(f"{at}: not an act of the catalogue")
        if step.closed_citing is not None and not step.until:
            problems.append(f"{at}: closed_citing without until (no act closes it)")
        if step.unmet_citing is not None and not step.when:
            problems.append(f"{at}: unmet_citing without when (no condition to cite it for)")
        citing = [article for article in (step.closed_citing, step.unmet_citing) if article is not None]
        for article in (step.article, step.ordered_by, *citing):
            if not isinstance(article, str) or not ARTICLE_ID.match(article):
                problems.append(f"{at}: article {article!r} is not an article id")
        for ref in step.after + step.after_any + step.until:
            if ref not in acts:
                problems.append(f"{at}: refers to {ref!r}, not an act of this lifecycle")
        for name in step.when + step.unless:
            if name not in lifecycle.conditions:
                problems.append(f"{at}: condition {name!r} is not defined in this lifecycle")
        for deadline in step.opens + step.closes:
            if f"deadline.{deadline}" not in statute.ids():
                problems.append(f"{at}: no deadline.{deadline} parameter")
        if step.by is not None and step.by not in BY:
            problems.append(f"{at}: by {step.by!r} is not one of {', '.join(BY)}")
        if step.act in step.after + step.after_any:
            problems.append(f"{at}: follows itself")
    for name, condition in lifecycle.conditions.items():
        if not ARTICLE_ID.match(condition.article):
            problems.append(f"{where}: condition {name}: article {condition.article!r} is not an article id")
        if conditions is not None and name not in conditions:
            problems.append(f"{where}: condition {name!r} has no predicate in the domain")
    for name in lifecycle.ends_when:
        if name not in lifecycle.conditions:
            problems.append(f"{where}: ends_when {name!r} is not a condition of this lifecycle")
    for act in lifecycle.ends:
        if act not in acts:
            problems.append(f"{where}: ends with {act!r}, not an act of this lifecycle")
    for exclusion in lifecycle.excluded.values():
        if exclusion.act in acts:
            problems.append(f"{where}: {exclusion.act} is both a step and excluded")
        if not ARTICLE_ID.match(exclusion.article):
            problems.append(f"{where}: exclusion {exclusion.act}: article {exclusion.article!r} is not an article id")
    unreachable = set(acts) - reachable(lifecycle)
    if unreachable:
        problems.append(f"{where}: not reachable from the opening: {', '.join(sorted(unreachable))}")
    return problems


def reachable(lifecycle: Lifecycle) -> set[str]:
    """The acts reachable from the opening by following `after` and `after_any` (conditions assumed to hold)."""
    reached = {lifecycle.opening.act}
    grew = True
    while grew:
        grew = False
        for step in lifecycle.steps:
            if step.act in reached:
                continue
            if all(a in reached for a in step.after) and (not step.after_any or
                                                           any(a in reached for a in step.after_any)):
                reached.add(step.act)
                grew = True
    return reached


#: The section of docs/law/lifecycles.md that reads each kind's lifecycle (the two district kinds share one).
ANCHORS = {"district_creation": "district-creation-and-suppression",
           "district_suppression": "district-creation-and-suppression"}


def anchor_of(kind: str) -> str:
    return ANCHORS.get(kind, kind)
