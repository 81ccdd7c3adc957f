"""The statute's amendments, recorded as acts (domain/amendments.py), and the statute in force on a day."""

from __future__ import annotations

from datetime import date, timedelta
from typing import Any

from eventsourcing.utils import get_topic

from domain.access import Receipt
from domain.acts import Actor
from domain.alerts import Alert
from domain.amendments import ACT, Applied, StatuteAmendments, amendment_problems
from domain.application.base import Acted, ApplicationBase
from domain.case import CONDITIONS, KINDS, Case
from domain.errors import InvalidActError, Sentence, StatuteAmendmentError
from domain.lifecycle import lifecycle_problems
from domain.parameters import Parameter, Statute

#: Aggregates whose events judge nothing under the statute (an alert, an act's receipt) or only record their own
#: competence (an amendment): they count for the versions they record, not as "an act judged on this day".
_NOT_JUDGING = tuple(get_topic(cls) + "." for cls in (Alert, Receipt, StatuteAmendments))
#: How many notifications the scan of what acts applied reads at a time.
_SCAN_PAGE = 1000


def _case_events() -> set[str]:
    return {name for name, value in vars(Case).items() if isinstance(value, type) and issubclass(value, Case.Event)
            and name != "Event"}


def _lifecycle_check(statute: Statute) -> list[str]:
    return lifecycle_problems(statute, kinds=KINDS, conditions=set(CONDITIONS), events=_case_events())


class StatuteActs(ApplicationBase):
    """Amendments of the statute (the Mesa's act, or the operator's), and the statute in force on a day."""

    def amend_statute(self, actor: Actor, published_on: date, *, law: str, parameters: list[dict[str, Any]],
                      sources: dict[str, str] | None = None) -> Acted:
        """Record an amendment of the statute: the law published on `published_on` gives `parameters` (new
        versions, each with its `effective_from`, article and source). Judged as the shipped data is, and against
        what recorded acts applied; refused whole (StatuteAmendmentError, by entry) or recorded whole."""

        def attempt() -> Acted:
            ctx = self.context(actor, published_on)
            competence = ctx.statute.in_force("competence.statute-amendment", ctx.occurred_on)
            ctx.require_role(competence.value[ACT], competence.article, ACT)
            book = self._get_or_none(StatuteAmendments.ID)
            before_version = book.version if book is not None else 0
            statute = self.shipped_statute.amended(book.amendments if book is not None else [])
            entries, problems = amendment_problems(statute, law, sources, parameters, self.applied(),
                                                   _lifecycle_check)
            if problems:
                raise StatuteAmendmentError(problems)
            book = book if book is not None else StatuteAmendments.open(ctx)
            book.amend(ctx, law=law.strip(), sources=dict(sources or {}), parameters=entries,
                       rule_versions={competence.id: competence.version})
            versions = [f"{entry['id']}@{entry['effective_from'].isoformat()}" for entry in entries]
            acted = Acted(book.id, "statute", book.version, {"amendment": len(book.amendments),
                                                             "versions": versions},
                          decided_from=before_version + 1)
            return acted.stored(self.save(book, *self._receipts(ctx, acted)))

        return self._retrying(attempt)

    def applied(self) -> Applied:
        """What the recorded acts applied, read from the whole log: each version's last legal date in a decision,
        and the last legal date of any act. An amendment is rare; its cost grows with the log (docs/operations.md)."""
        applied = Applied()
        decode, start = self.mapper.transcoder.decode, 1
        compressor, cipher = self.mapper.compressor, self.mapper.cipher
        while notifications := self.recorder.select_notifications(start=start, limit=_SCAN_PAGE):
            for notification in notifications:
                try:
                    data = notification.state
                    if cipher is not None:
                        data = cipher.decrypt(data)
                    if compressor is not None:
                        data = compressor.decompress(data)
                    state = decode(data)
                except Exception as error:  # an altered row: judging without it could miss a decision
                    raise StatuteAmendmentError({"parameters": [
                        f"event {notification.id} of the log cannot be read ({type(error).__name__}), so what the "
                        "acts applied cannot be known; run `tramita verify` and restore the store"]}) from None
                occurred_on = state.get("occurred_on")
                if type(occurred_on) is not date:
                    continue
                topic = notification.topic
                where = (f"{topic.rsplit('.', 1)[-1]} (version {notification.originator_version} of "
                         f"{notification.originator_id})")
                applied.note(occurred_on, state.get("rule_versions") or {}, where,
                             every_act=not topic.startswith(_NOT_JUDGING))
            start = notifications[-1].id + 1
        return applied

    def amendments(self) -> list[dict[str, Any]]:
        """Every amendment recorded, oldest first: its number, law, publication, recording, actor and versions."""
        return [_amendment_row(a) for a in self.statute.amendments]

    def statute_on(self, on: date, parameter: str | None = None) -> dict[str, Any]:
        """The statute in force on `on`: each parameter's version that day, and its whole history, each version
        with the act that introduced it (the shipped data, or an amendment)."""
        statute = self.statute
        ids = statute.ids()
        if parameter is not None:
            if parameter not in ids:
                raise InvalidActError("parameter", Sentence(
                    "the statute has no parameter %(parameter)r",
                    parameter=parameter))
            ids = [parameter]
        rows = []
        for parameter_id in ids:
            versions = statute.versions(parameter_id)
            history = [_version_row(statute, version, versions[i + 1] if i + 1 < len(versions) else None, on)
                       for i, version in enumerate(versions)]
            current = next((row for row in history if row["in_force"]), None)
            rows.append({"id": parameter_id, "article": versions[-1].article, "in_force": current,
                         "history": history})
        return {"on": on, "shipped": statute.version, "amendments": self.amendments(), "parameters": rows}


def _until(version: Parameter, following: Parameter | None) -> date | None:
    if version.effective_until is not None:
        return version.effective_until
    return following.effective_from - timedelta(days=1) if following is not None else None


def _version_row(statute: Statute, version: Parameter, following: Parameter | None, on: date) -> dict[str, Any]:
    until = _until(version, following)
    introduced = version.introduced_by
    return {
        "version": version.version, "effective_from": version.effective_from, "effective_until": until,
        "in_force": version.effective_from <= on and (until is None or on <= until),
        "value": version.value, "comparison": version.comparison, "source": version.source,
        "extra": version.extra or None,
        "introduced_by": ({"act": "statute-data", "statute": statute.version} if introduced is None else
                          {"act": ACT, "amendment": introduced["number"], "law": introduced["law"],
                           "published_on": introduced["published_on"], "recorded_at": introduced["recorded_at"],
                           "hash": introduced["hash"]}),
    }


def _amendment_row(amendment: dict[str, Any]) -> dict[str, Any]:
    return {"number": amendment["number"], "law": amendment["law"], "published_on": amendment["published_on"],
            "recorded_at": amendment["recorded_at"], "actor": amendment["actor"], "hash": amendment["hash"],
            "sources": amendment["sources"],
            "versions": [f"{p['id']}@{p['effective_from'].isoformat()}" for p in amendment["parameters"]]}
