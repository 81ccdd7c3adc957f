"""The domain's own errors: every refusal names the article at fault (house style: `<Condition>Error`)."""

from __future__ import annotations

from typing import Any


class LegalRuleError(Exception):
    """An act refused under the law: carries the article id (`art-13`) and a plain-language message.

    `figures` holds what was compared (required and found), so that an API can show them.
    """

    def __init__(self, article: str, message: str, **figures: Any) -> None:
        super().__init__(f"{article}: {message}")
        self.article = article
        self.message = message
        self.figures = figures


class ActOutOfOrderError(LegalRuleError):
    """The act is not allowed at this point of the case (the article names the order)."""


class IncompetentBodyError(LegalRuleError):
    """The actor's role is not the competent body for this act."""


class RuleNotInForceError(LegalRuleError):
    """No version of a statute parameter was in force on the act's date."""


class CaseNotFoundError(Exception):
    """No case with that number or id, or no such event of it.

    `reference` is the case's number or id as it was asked for, never the id a number resolves to, so that the
    answer names what the client asked for. The message is one sentence, `template % values` with the reference
    as `%(reference)s`, so that it can be given translated whole (the API's problem details).
    """

    NO_CASE = "no case %(reference)s"
    NO_SUCH_EVENT = "case %(reference)s has events 1 to %(events)d; %(version)d is none"
    EVENT_NOT_STORED = "no event %(version)d of %(reference)s"
    EVENT_NOT_IN_LOG = "event %(version)d of %(reference)s is not in the notification log"

    def __init__(self, reference: Any, template: str = NO_CASE, **values: Any) -> None:
        self.reference = str(reference)
        self.template = template
        self.values = {"reference": self.reference, **values}
        super().__init__(template % self.values)


class AlertNotFoundError(Exception):
    """No alert with that id."""


class MunicipalityNotFoundError(Exception):
    """No municipality with that IBGE code in the registry."""


class StaleVersionError(Exception):
    """The caller expected another version of the case (optimistic concurrency)."""

    def __init__(self, expected: int, actual: int) -> None:
        super().__init__(f"expected version {expected}, the case is at version {actual}")
        self.expected = expected
        self.actual = actual


class InvalidActError(Exception):
    """Input that does not describe an act at all (missing or malformed field); names the field."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(f"{field}: {message}")
        self.field = field
        self.message = message


class StatuteAmendmentError(InvalidActError):
    """An amendment refused: every problem, keyed by the entry it is in (`parameters[2]`, `law`, ...)."""

    def __init__(self, problems: dict[str, list[str]]) -> None:
        first = next(iter(problems))
        summary = "; ".join(f"{key}: {' '.join(messages)}" for key, messages in problems.items())
        super().__init__(first, f"the amendment is refused and nothing was recorded: {summary}")
        self.problems = problems


class AuthenticationError(Exception):
    """No token, a malformed or unknown token, or a revoked one: nobody is recording the act."""


class IdempotencyKeyReusedError(Exception):
    """An `Idempotency-Key` already used by this token for another request (another act, case or body)."""

    def __init__(self, key: str, act: str, case_number: str) -> None:
        super().__init__(f"Idempotency-Key {key!r} was already used by this token for another request "
                         f"({act} on {case_number}); a retry must repeat the original request exactly")
        self.key = key
