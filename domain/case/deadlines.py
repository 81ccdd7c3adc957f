"""Art. 10, 14-16, 22-26: the statutory deadlines of a case: opened with their due date, met (late or not), missed.

A deadline's length, start and who must act are statute data (`deadline.<id>` in lc35.toml); the counting
convention and the calendar compute its due date when it opens, and the event records it (never re-derived).
Which act opens and closes which deadline is also listed in each kind's lifecycle (lifecycles.toml).
"""

from __future__ import annotations

from datetime import date
from typing import TYPE_CHECKING, Any

from domain.acts import ActContext, ChainedAggregate
from domain.calendar import Calendar
from domain.case.events import Logged
from domain.lifecycle import act_catalogue

if TYPE_CHECKING:
    from domain.case import Case


class CaseConcluded(Logged, ChainedAggregate.Event):
    """Art. 19-26, 40: every obligation of the case is closed (docs/law/lifecycles.md#creation, step 7)."""

    def assign(self, case: Case) -> None:
        case.concluded_on = self.occurred_on
        case.stage = "concluded"


class DeadlineOpened(Logged, ChainedAggregate.Event):
    """A statutory deadline starts: its rule, due date (as computed then), convention and who must act."""

    deadline: str
    rule: str
    who: str
    municipality: str | None
    starts_on: date
    due_on: date | None
    raw_due_on: date | None
    convention: str | None
    calendar_version: str | None
    moved_over: list[str]

    def assign(self, case: Case) -> None:
        case.deadlines[self.deadline] = {
            "rule": self.rule, "article": self.article, "who": self.who, "municipality": self.municipality,
            "starts_on": self.starts_on, "due_on": self.due_on, "status": "open", "closed_by": None,
            "closed_on": None, "days_late": None}


class DeadlineDueDateSet(Logged, ChainedAggregate.Event):
    """A deadline due on a later event's date (Art. 26 par. ún.: on the installation date) gets that date."""

    deadline: str
    due_on: date

    def assign(self, case: Case) -> None:
        case.deadlines[self.deadline]["due_on"] = self.due_on


class DeadlineMet(Logged, ChainedAggregate.Event):
    """A statutory deadline is closed by its act, on time or late (the record of lateness stays)."""

    deadline: str
    closing_act: str
    on_time: bool
    days_late: int

    def assign(self, case: Case) -> None:
        case.deadlines[self.deadline].update(
            status="met-on-time" if self.on_time else "met-late", closed_by=self.closing_act,
            closed_on=self.occurred_on, days_late=self.days_late)
        kind, _, requisition = self.deadline.partition(":")
        if kind == "requisition-answer" and requisition in case.requisitions:  # answered: out of the index
            case.unanswered.get(case.requisitions[requisition]["body"], {}).pop(requisition, None)


class DeadlineMissed(Logged, ChainedAggregate.Event):
    """A deadline found missed by an act (Art. 26 par. ún.: documents not sent by the installation)."""

    deadline: str

    def assign(self, case: Case) -> None:
        case.deadlines[self.deadline]["status"] = "missed"


#: The status, and the closing act, of a deadline its case's archive ended (`Deadlines.standing_deadlines`).
ENDED, ENDED_BY = "ended", "case-archived"


class Deadlines:
    """Opening, meeting and missing deadlines; the case's open obligations and its conclusion."""

    def standing_deadlines(self: Case) -> dict[str, dict[str, Any]]:
        """The deadlines as they stand. An archived case takes no further act (its final act, Art. 16 par. ún. or a
        withdrawal or rejection), so a deadline still open and not due before the archive's day (due that day or
        later, or not yet dated) ends with the case: shown `ended`, closed by the archive on its day, calling for
        no alert. One already due before the archive was missed while the case was live and stays as recorded (its
        `missed` alert is due). Derived on read: the archive's event records the archive, nothing more."""
        if self.archived is None:
            return self.deadlines
        on = self.archived["on"]
        return {key: {**d, "status": ENDED, "closed_by": ENDED_BY, "closed_on": on}
                if d["closed_by"] is None and d["status"] != "missed" and (d["due_on"] is None or d["due_on"] >= on)
                else d for key, d in self.deadlines.items()}

    def _open_deadline(self, ctx: ActContext, calendar: Calendar, rule: str, *, key: str | None = None,
                       who: str | None = None, municipality: str | None = None) -> None:
        """Record a deadline's opening with the due date computed now, and how it was computed."""
        parameter = ctx.statute.in_force(f"deadline.{rule}", ctx.occurred_on)
        spec = parameter.value
        versions = {parameter.id: parameter.version}
        due = raw = convention = calendar_version = None
        moved: list[str] = []
        if spec["unit"] != "on-installation":
            counting = ctx.statute.in_force("deadline.counting-convention", ctx.occurred_on)
            versions[counting.id] = counting.version
            computed = calendar.due_date(ctx.occurred_on, spec["length"], spec["unit"], counting.value)
            due, raw, convention = computed.due, computed.raw, computed.convention
            calendar_version, moved = computed.calendar_version, list(computed.moved_over)
        self._record(self.DeadlineOpened, ctx, article=parameter.article, rule_versions=versions,
                     deadline=key or rule, rule=rule, who=who or spec["who"], municipality=municipality,
                     starts_on=ctx.occurred_on, due_on=due, raw_due_on=raw, convention=convention,
                     calendar_version=calendar_version, moved_over=moved)

    def _deadline_open(self, key: str) -> bool:
        return key in self.deadlines and self.deadlines[key]["closed_by"] is None

    def _close_deadline(self, ctx: ActContext, key: str, closing_act: str) -> None:
        """The closing act meets a deadline: on time when its legal date is on or before the due day, even when the
        deadline was recorded missed before it was recorded (Art. 26 par. ún.'s documents, missed at the
        installation and sent the same day; an act recorded after the scheduler's alert): a deadline is missed only
        while no closing act dated on or before its last day exists. The missed record and its alert stay in the
        case's history, and an act recorded after its legal date is marked so on its own."""
        if not self._deadline_open(key):
            return
        deadline = self.deadlines[key]
        due = deadline["due_on"]
        days_late = max(0, (ctx.occurred_on - due).days) if due is not None else 0
        self._record(self.DeadlineMet, ctx, article=deadline["article"], deadline=key, closing_act=closing_act,
                     on_time=days_late == 0, days_late=days_late)

    def _conclude_if_done(self, ctx: ActContext) -> None:
        """Art. 19-26, 40: the case is concluded when every obligation after installation is closed."""
        if self.installation is None or self.concluded_on is not None:
            return
        if not any(self.obligations(ctx).values()):
            self._record(self.CaseConcluded, ctx, article="art-19")

    def _still_closable(self: Case, ctx: ActContext, deadline: dict[str, Any]) -> bool:
        """Can an act of the lifecycle in force still close the deadline: is some step that `closes` it not past its
        stage (no act of its `until` recorded)? One whose closing acts are all past their stage, an Art. 10
        requisition still unanswered when the plebiscite was decreed (no finding follows the decree, Art. 11), is no
        obligation the case waits on: it stays open, or missed, and is alerted as any deadline, but the case may
        conclude without it."""
        statute, on = ctx.statute, ctx.occurred_on
        closers = self.lifecycle(statute, on).closers.get(deadline["rule"], ())
        if all(not step.until for step in closers):
            return True
        catalogue = act_catalogue(statute, on)
        return any(not any(self._recorded(catalogue, act) for act in step.until) for step in closers)

    def obligations(self, ctx: ActContext) -> dict[str, list[str]]:
        """What is still open: deadlines an act can still close, Art. 40 communications, Art. 25, and Art. 16 par.
        ún.'s archive."""
        return {
            "deadlines": [k for k, d in self.standing_deadlines().items()
                          if d["closed_by"] is None and self._still_closable(ctx, d)],
            "communications": [c for c in self.communications_due(ctx) if c not in self.communications],
            "remuneration": [] if self.remuneration or self.installation is None else ["art-25"],
            "archive": ["art-16-par-unico"] if self.result and not self.result["favourable"] else [],
        }
