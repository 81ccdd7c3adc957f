"""The chain hash's step 2 (domain/chain.py): the bytes hashed are exactly the recipe's `json.dumps`, whichever
encoder writes them, so that an auditor's offline check with the standard library gives every recorded hash."""

from __future__ import annotations

import json
from datetime import date, datetime, timedelta, timezone
from decimal import Decimal
from functools import cache
from uuid import UUID

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from domain import chain
from tests.stores import make_app


def recipe(event_type: str, fields: dict) -> bytes:
    """The recipe as the README states it, with nothing but the standard library."""
    document = chain.canonical_document(event_type, fields)
    return json.dumps(document, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode("utf-8")


#: UTC (the clock's), a whole-hour offset, and offsets with minutes and seconds (which `isoformat` writes).
ZONES = (timezone.utc, timezone(timedelta(hours=-5)), timezone(timedelta(hours=1, minutes=1, seconds=1)),
         timezone(timedelta(hours=-4, minutes=-31, seconds=-12)))
# Any text but lone surrogates (which no event can hold: they are not UTF-8), control characters included.
TEXT = st.text(st.characters(blacklist_categories=("Cs",)), max_size=20)
INTEGERS = st.one_of(st.integers(), st.sampled_from([2**63 - 1, 2**63, -2**63, -2**63 - 1, 2**64, 2**64 - 1, 10**40]))
VALUES = st.recursive(
    st.one_of(st.none(), st.booleans(), INTEGERS, TEXT, st.dates(),
              st.datetimes(timezones=st.sampled_from(ZONES)), st.datetimes(), st.uuids(),
              st.decimals(allow_nan=False, allow_infinity=False)),
    lambda inner: st.one_of(st.lists(inner, max_size=4), st.lists(inner, max_size=3).map(tuple),
                            st.dictionaries(TEXT, inner, max_size=4),
                            st.dictionaries(st.one_of(st.integers(), st.booleans()), inner, max_size=2)),
    max_leaves=20,
)


@settings(max_examples=400, deadline=None)
@given(st.dictionaries(TEXT.filter(lambda key: key not in chain.EXCLUDED_FIELDS), VALUES, max_size=8))
def test_an_events_canonical_bytes_are_the_recipes_json_dumps_whatever_it_holds(fields):
    assert chain.canonical_bytes("Case.Anything", fields) == recipe("Case.Anything", fields)


@cache
def stored_json():
    """The transcoder that writes and reads the application's stored events."""
    return make_app("memory://").mapper.transcoder


@settings(max_examples=300, deadline=None)
@given(st.dictionaries(TEXT.filter(lambda key: key not in chain.EXCLUDED_FIELDS), st.dictionaries(
    st.one_of(TEXT, st.integers(), st.booleans(), st.none(), st.floats(allow_nan=False)), VALUES, max_size=4),
    max_size=4))
def test_an_event_hashes_alike_when_recorded_and_when_read_back_whatever_its_dicts_keys(fields):
    """JSON writes a key `True` as "true" and `None` as "null", and the event is read back with those keys: the
    hash took `str(key)` ("True"), so such an event no longer matched its recorded hash."""
    read_back = stored_json().decode(stored_json().encode(fields))
    assert chain.canonical_bytes("Case.Anything", read_back) == chain.canonical_bytes("Case.Anything", fields)


def test_a_key_json_refuses_is_refused_by_the_hash_too():
    with pytest.raises(TypeError, match="cannot hash a key of type tuple"):
        chain.canonical_bytes("Case.Anything", {"tally": {(1, 2): 3}})


def test_every_character_but_a_surrogate_is_written_as_the_recipe_writes_it():
    characters = [chr(code) for code in range(0x110000) if not 0xD800 <= code <= 0xDFFF]
    for start in range(0, len(characters), 2048):
        block = characters[start:start + 2048]
        fields = {"text": "".join(block), **{character: n for n, character in enumerate(block[::7])}}
        assert chain.canonical_bytes("Case.Anything", fields) == recipe("Case.Anything", fields), hex(ord(block[0]))


def test_an_integer_beyond_64_bits_is_written_as_the_recipe_writes_it():
    for value in (2**63 - 1, 2**63, 2**64, -2**63, -2**63 - 1, -(2**64), 10**100):
        fields = {"value": value, "nested": [{"value": value}]}
        assert chain.canonical_bytes("Case.Anything", fields) == recipe("Case.Anything", fields)


def test_a_recorded_events_hash_is_unchanged():
    """A fixed event, hashed with the recipe by the code before orjson wrote step 2: its hash never changes."""
    fields = {
        "originator_id": UUID("e2964cb3-cff7-50a9-97d4-17b4bc08691d"), "originator_version": 2,
        "timestamp": datetime(2026, 11, 30, 12, tzinfo=timezone.utc), "occurred_on": date(2014, 1, 2),
        "actor": {"principal": "mesa-demo", "role": "assembly-mesa", "municipality": None}, "article": "art-10",
        "rule_versions": {}, "prev_hash": "d7bcc72d3fa50ed15372bda2c2a4b7994f62849431699f87919bcac94ee22109",
        "requisition": "R1", "body": "ibge", "items": ["art-4"], "area_km2": Decimal("42.05"), "name": "Acrelândia",
        "hash": "left out",
    }
    assert chain.event_hash("Case.RequisitionIssued", fields) == \
        "c9f8d5a288b50204fc74bbc3d1145486112e125177a99b2848f3024a72ed937f"
