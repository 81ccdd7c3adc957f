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
    """No case with that number or id."""


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
