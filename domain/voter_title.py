"""Art. 8 par. ún.: the voter-title (título de eleitor) number of each signatory, and its check digits.

A title number has 12 digits: an 8-digit sequence, a 2-digit electoral state code (01..28,
28 = abroad) and 2 check digits. SP (01) and MG (02) also issue 13-digit titles, whose
sequence has 9 digits. The check digits are computed modulo 11:

- DV1 = sum(sequence digit * weight) mod 11, weights 2, 3, 4, ... from the left
  (2..9 for an 8-digit sequence, 2..10 for a 9-digit one);
- DV2 = (state digit 1 * 7 + state digit 2 * 8 + DV1 * 9) mod 11;
- for both, a remainder of 10 gives 0, and in SP and MG a remainder of 0 gives 1.

Which state a title must belong to is the caller's rule (statute data), not this module's.
"""

from __future__ import annotations

from dataclasses import dataclass

from domain.errors import Sentence

_DIGITS = frozenset("0123456789")
_SEPARATORS = frozenset(" \t\n\r\u00a0.-\u2010\u2011\u2013\u2014")
_SEQUENCE_LENGTH = 8
_LONG_SEQUENCE_LENGTH = 9
_FIRST_STATE_CODE = 1
_LAST_STATE_CODE = 28
# The check-digit algorithm's own exception: in SP (01) and MG (02) a remainder of 0 gives 1,
# and only these two states issue 13-digit titles.
_SP_MG = frozenset({"01", "02"})


@dataclass(frozen=True)
class TitleCheck:
    """Art. 8 par. ún.: the outcome of checking one voter-title number."""

    number: str
    valid: bool
    state_code: str | None
    #: Why the number is invalid, as a sentence of the refusals (None when valid).
    said: Sentence | None

    @property
    def reason(self) -> str | None:
        """Why the number is invalid, in English."""
        return None if self.said is None else str(self.said)


def normalise_title(raw: str) -> str:
    """Art. 8 par. ún.: the title as typed, without spaces, dots and dashes (other characters kept)."""
    return "".join(ch for ch in raw if ch not in _SEPARATORS)


def _remainder_digit(total: int, state_code: str) -> int:
    remainder = total % 11
    if remainder == 10:
        return 0
    if remainder == 0 and state_code in _SP_MG:
        return 1
    return remainder


def _check_digits(sequence: str, state_code: str) -> str:
    """Art. 8 par. ún.: the two check digits for a sequence and a state code."""
    dv1 = _remainder_digit(
        sum(int(digit) * weight for weight, digit in enumerate(sequence, start=2)), state_code
    )
    dv2 = _remainder_digit(int(state_code[0]) * 7 + int(state_code[1]) * 8 + dv1 * 9, state_code)
    return f"{dv1}{dv2}"


def _state_code_is_valid(state_code: str) -> bool:
    return _FIRST_STATE_CODE <= int(state_code) <= _LAST_STATE_CODE


def check_voter_title(raw: str) -> TitleCheck:
    """Art. 8 par. ún.: whether a voter-title number is well formed and its check digits match."""
    text = normalise_title(raw)
    digits = "".join(ch for ch in text if ch in _DIGITS)
    if not text:
        return TitleCheck(digits, False, None, "no title number was given")
    if digits != text:
        junk = "".join(sorted({ch for ch in text if ch not in _DIGITS}))
        return TitleCheck(
            digits, False, None, Sentence(
                "the title number contains characters other than digits (%(junk)r)",
                junk=junk)
        )
    if len(digits) not in (_SEQUENCE_LENGTH + 4, _LONG_SEQUENCE_LENGTH + 4):
        return TitleCheck(
            digits,
            False,
            None,
            Sentence(
                "a title number has 12 digits (13 in SP and MG), found %(digits_count)s",
                digits_count=len(digits)),
        )
    sequence, state_code, found = digits[:-4], digits[-4:-2], digits[-2:]
    if not _state_code_is_valid(state_code):
        return TitleCheck(
            digits,
            False,
            state_code,
            Sentence("state code %(state_code)s does not exist (valid codes are 01 to 28)", state_code=state_code),
        )
    if len(sequence) == _LONG_SEQUENCE_LENGTH and state_code not in _SP_MG:
        return TitleCheck(
            digits,
            False,
            state_code,
            Sentence(
                "13-digit titles are issued only in SP (01) and MG (02), found state code %(state_code)s",
                state_code=state_code),
        )
    expected = _check_digits(sequence, state_code)
    if expected != found:
        return TitleCheck(
            digits,
            False,
            state_code,
            Sentence(
                "check digits do not match (expected %(expected)s, found %(found)s)",
                expected=expected, found=found),
        )
    return TitleCheck(digits, True, state_code, None)


def make_voter_title(sequence: str, state_code: str) -> str:
    """Art. 8 par. ún.: a valid title number built from a sequence and a state code (tests, demo data).

    Raises ValueError when the sequence or the state code could not form a valid title.
    """
    if not (sequence and set(sequence) <= _DIGITS):
        raise ValueError(f"the sequence must be digits only, got {sequence!r}")
    if not (len(state_code) == 2 and set(state_code) <= _DIGITS and _state_code_is_valid(state_code)):
        raise ValueError(f"the state code must be 01 to 28, got {state_code!r}")
    if len(sequence) == _LONG_SEQUENCE_LENGTH and state_code not in _SP_MG:
        raise ValueError("a 9-digit sequence exists only in SP (01) and MG (02)")
    if len(sequence) not in (_SEQUENCE_LENGTH, _LONG_SEQUENCE_LENGTH):
        raise ValueError(f"the sequence must have 8 digits (9 in SP and MG), got {len(sequence)}")
    return f"{sequence}{state_code}{_check_digits(sequence, state_code)}"
