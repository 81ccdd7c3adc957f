"""Art. 8 par. ún.: each signatory's voter-title number must be well formed and its check digits must match."""

from __future__ import annotations

import pytest

from domain.voter_title import TitleCheck, check_voter_title, make_voter_title, normalise_title

# Worked by hand: sequence 12345678, state 24 (Acre).
# DV1 = 1*2 + 2*3 + 3*4 + 4*5 + 5*6 + 6*7 + 7*8 + 8*9 = 240; 240 mod 11 = 9
# DV2 = 2*7 + 4*8 + 9*9 = 127; 127 mod 11 = 6
ACRE_TITLE = "123456782496"


def test_a_title_built_for_acre_carries_its_hand_computed_check_digits() -> None:
    assert make_voter_title("12345678", "24") == ACRE_TITLE


def test_a_valid_acre_title_is_valid_and_reports_state_code_24() -> None:
    assert check_voter_title(ACRE_TITLE) == TitleCheck(ACRE_TITLE, True, "24", None)


def test_a_title_from_a_published_example_is_valid() -> None:
    # 0043 5687 09 06 (GO): DV1 = 230 mod 11 = 10 -> 0; DV2 = 0*7 + 9*8 + 0*9 = 72 mod 11 = 6.
    assert check_voter_title("0043 5687 0906").valid


def test_voter_title_with_wrong_check_digits_is_invalid() -> None:
    check = check_voter_title("123456782495")
    assert not check.valid
    assert check.state_code == "24"
    assert check.reason == "check digits do not match (expected 96, found 95)"


def test_voter_title_with_one_sequence_digit_changed_is_invalid() -> None:
    # 0*2 + 2*3 + ... + 8*9 = 238 mod 11 = 7; DV2 = 14 + 32 + 63 = 109 mod 11 = 10 -> 0.
    check = check_voter_title("023456782496")
    assert not check.valid
    assert check.reason == "check digits do not match (expected 70, found 96)"


@pytest.mark.parametrize("typed", ["1234 5678 2496", "1234.5678.24-96", " 12345678-24-96 "])
def test_voter_title_typed_with_spaces_dots_and_dashes_is_read_as_its_digits(typed: str) -> None:
    assert normalise_title(typed) == ACRE_TITLE
    assert check_voter_title(typed) == TitleCheck(ACRE_TITLE, True, "24", None)


@pytest.mark.parametrize("typed", ["1234 5678 24A6", "12345678/2496", "１２３４５６７８２４９６"])
def test_voter_title_with_characters_other_than_digits_is_invalid(typed: str) -> None:
    check = check_voter_title(typed)
    assert not check.valid
    assert check.state_code is None
    assert check.reason is not None and "other than digits" in check.reason


def test_an_empty_voter_title_is_invalid() -> None:
    check = check_voter_title(" - ")
    assert not check.valid
    assert check.reason == "no title number was given"


@pytest.mark.parametrize("typed", ["12345678249", "1234567824960", "12345678249600", "2496"])
def test_voter_title_of_the_wrong_length_is_invalid(typed: str) -> None:
    check = check_voter_title(typed)
    assert not check.valid
    assert check.reason is not None


def test_voter_title_of_eleven_digits_says_twelve_are_required() -> None:
    assert check_voter_title("12345678249").reason == (
        "a title number has 12 digits (13 in SP and MG), found 11"
    )


@pytest.mark.parametrize(
    ("title", "state_code"),
    [
        ("123456780094", "00"),  # DV1 = 9; DV2 = 0 + 0 + 81 = 81 mod 11 = 4
        ("123456782992", "29"),  # DV1 = 9; DV2 = 14 + 72 + 81 = 167 mod 11 = 2
    ],
)
def test_voter_title_with_state_code_outside_01_to_28_is_invalid_even_with_matching_check_digits(
    title: str, state_code: str
) -> None:
    check = check_voter_title(title)
    assert not check.valid
    assert check.state_code == state_code
    assert check.reason == f"state code {state_code} does not exist (valid codes are 01 to 28)"


def test_voter_title_issued_abroad_with_state_code_28_is_valid() -> None:
    assert check_voter_title(make_voter_title("12345678", "28")).valid


def test_in_sp_a_first_remainder_of_zero_gives_check_digit_one() -> None:
    # 1*2 + 8 zeros + 1*9 = 11 -> remainder 0: SP (01) gives 1, then DV2 = 0*7 + 1*8 + 1*9 = 17 mod 11 = 6.
    assert make_voter_title("10000001", "01") == "100000010116"
    assert check_voter_title("100000010116").valid
    assert check_voter_title("100000010106").reason == (
        "check digits do not match (expected 16, found 06)"
    )


def test_outside_sp_and_mg_a_first_remainder_of_zero_gives_check_digit_zero() -> None:
    # Same sequence in Acre: DV1 = 0; DV2 = 2*7 + 4*8 + 0*9 = 46 mod 11 = 2.
    assert make_voter_title("10000001", "24") == "100000012402"
    assert check_voter_title("100000012402").valid
    assert not check_voter_title("100000012412").valid


def test_in_mg_a_second_remainder_of_zero_gives_check_digit_one() -> None:
    # 1*8 = 8 -> DV1 = 8; DV2 = 0*7 + 2*8 + 8*9 = 88 mod 11 = 0: MG (02) gives 1.
    assert make_voter_title("00000010", "02") == "000000100281"
    assert check_voter_title("000000100281").valid
    assert check_voter_title("000000100280").reason == (
        "check digits do not match (expected 81, found 80)"
    )


def test_a_thirteen_digit_sp_title_weighs_its_nine_digit_sequence_from_2_to_10() -> None:
    # 1 in the 9th place weighs 10: remainder 10 -> DV1 = 0; DV2 = 0*7 + 1*8 + 0*9 = 8.
    assert make_voter_title("000000001", "01") == "0000000010108"
    assert check_voter_title("0000 0000 1010 8") == TitleCheck("0000000010108", True, "01", None)


def test_a_thirteen_digit_title_from_outside_sp_and_mg_is_invalid() -> None:
    check = check_voter_title("1" + ACRE_TITLE)
    assert not check.valid
    assert check.reason == "13-digit titles are issued only in SP (01) and MG (02), found state code 24"


@pytest.mark.parametrize(
    ("sequence", "state_code"),
    [("12345678", "29"), ("12345678", "00"), ("12345678", "2"), ("1234567", "24"), ("123456789", "24"),
     ("1234567a", "24")],
)
def test_a_title_cannot_be_built_from_an_impossible_sequence_or_state_code(
    sequence: str, state_code: str
) -> None:
    with pytest.raises(ValueError):
        make_voter_title(sequence, state_code)


@pytest.mark.parametrize("state_code", [f"{code:02d}" for code in range(1, 29)])
def test_every_title_built_for_a_valid_state_is_valid_and_a_changed_check_digit_is_not(
    state_code: str,
) -> None:
    title = make_voter_title("87654321", state_code)
    assert check_voter_title(title).valid
    changed = title[:-1] + str((int(title[-1]) + 1) % 10)
    assert not check_voter_title(changed).valid
