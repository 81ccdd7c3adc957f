"""The stored events' bytes (domain/application/transcoder.py): whichever encoder writes a state, the row holds
exactly what the library's own JSON transcoder writes, so that old and new rows read alike and a database
administrator sees one format."""

from __future__ import annotations

import enum
import json
import sys
from datetime import date, datetime, time, timedelta, timezone
from decimal import Decimal
from uuid import UUID, uuid4

import pytest
from eventsourcing.persistence import DatetimeAsISO, DecimalAsStr, JSONTranscoder, StoredEvent, UUIDAsHex
from eventsourcing.utils import TopicError
from hypothesis import given, settings
from hypothesis import strategies as st

from domain.application.transcoder import DateAsISO
from domain.application.transcoder import DomainMapper, StoredJSONTranscoder, written_alike
from domain.demo import seed_demo
from domain.application import Tramita
from tests.stores import make_app, pinned_clock
from infrastructure.persistence import persistence_env


def registered(transcoder: JSONTranscoder) -> JSONTranscoder:
    """The transcodings the application registers (the library's and tramita's legal dates)."""
    for transcoding in (UUIDAsHex(), DecimalAsStr(), DatetimeAsISO(), DateAsISO()):
        transcoder.register(transcoding)
    return transcoder


LIBRARY, STORED = registered(JSONTranscoder()), registered(StoredJSONTranscoder())


def written(transcoder: JSONTranscoder, state: object) -> bytes | str:
    """The bytes a transcoder writes, or the type of what it raised."""
    try:
        return transcoder.encode(state)
    except Exception as error:  # noqa: BLE001 - the two must fail alike
        return type(error).__name__


class Word(str):
    """A str subclass (the library's encoder writes it as a string)."""


class Colour(enum.Enum):
    RED = "red"


# Every character, lone surrogates included (not UTF-8: neither encoder can store one), and every kind of value a
# state could hold, those the fast path takes and those it leaves to the library.
TEXT = st.text(st.characters(), max_size=12)
INTEGERS = st.one_of(st.integers(), st.sampled_from([2**63 - 1, 2**63, -2**63, -2**63 - 1, 2**64, 2**64 - 1, 10**40]))
LEAVES = st.one_of(
    st.none(), st.booleans(), INTEGERS, TEXT, st.dates(), st.uuids(),
    st.datetimes(timezones=st.sampled_from([timezone.utc, timezone(timedelta(hours=-5))])),
    st.decimals(allow_nan=False, allow_infinity=False), st.floats(), st.builds(Word, TEXT),
    st.just(Colour.RED), st.just(time(12, 30)),
)
VALUES = st.recursive(
    LEAVES,
    lambda inner: st.one_of(st.lists(inner, max_size=4), st.lists(inner, max_size=3).map(tuple),
                            st.dictionaries(TEXT, inner, max_size=4),
                            st.dictionaries(st.one_of(st.integers(), st.booleans(), st.none()), inner, max_size=2)),
    max_leaves=20,
)


@settings(max_examples=600, deadline=None)
@given(st.dictionaries(TEXT, VALUES, max_size=8))
def test_a_stored_state_is_byte_for_byte_what_the_librarys_transcoder_writes(state):
    assert written(STORED, state) == written(LIBRARY, state)


@settings(max_examples=300, deadline=None)
@given(st.dictionaries(TEXT, VALUES, max_size=8))
def test_a_state_written_by_orjson_reads_back_as_the_library_reads_its_own(state):
    encoded = written(STORED, state)
    if isinstance(encoded, bytes):
        assert LIBRARY.decode(encoded) == LIBRARY.decode(LIBRARY.encode(state))


@pytest.mark.parametrize("value", [
    UUID("e2964cb3-cff7-50a9-97d4-17b4bc08691d"), 1.5, float("nan"), Word("x"), Colour.RED, time(1, 2),
    {1: "a"}, [{"deep": [UUID(int=1)]}], (date(2026, 1, 2), 0.1),
])
def test_a_value_orjson_would_write_differently_is_left_to_the_librarys_encoder(value):
    assert not written_alike({"value": value})
    assert written(STORED, {"value": value}) == written(LIBRARY, {"value": value})


def test_the_values_events_hold_are_written_by_orjson():
    state = {"occurred_on": date(2014, 1, 2), "timestamp": datetime(2026, 11, 30, 12, tzinfo=timezone.utc),
             "actor": {"principal": "mesa", "role": "assembly-mesa", "municipality": None}, "figures": [Decimal("1.5")],
             "items": ("art-4-I", "art-4-II"), "count": 3, "final": True, "text": "Área \u0000\n\"x\"\u2028"}
    assert written_alike(state)
    assert STORED.encode(state) == LIBRARY.encode(state)


class DateAsOrdinal(DateAsISO):
    """A date's transcoding registered in place of the ISO one (a subclass, still not written as ISO text)."""

    name = "date_ordinal"

    def encode(self, obj: date) -> int:  # type: ignore[override]
        return obj.toordinal()


def test_a_date_whose_transcoding_is_replaced_is_written_as_the_new_transcoding_writes_it():
    library, stored = registered(JSONTranscoder()), registered(StoredJSONTranscoder())
    for transcoder in (library, stored):
        transcoder.register(DateAsOrdinal())
    state = {"occurred_on": date(2014, 1, 2), "timestamp": datetime(2026, 11, 30, 12, tzinfo=timezone.utc)}
    assert stored.encode(state) == library.encode(state)
    assert b'"_type_":"date_ordinal","_data_":735235' in stored.encode(state)


def test_nesting_deeper_than_orjson_allows_is_written_by_the_librarys_encoder():
    state: dict = {"leaf": 1}
    for _ in range(300):
        state = {"inner": state}
    assert written(STORED, state) == written(LIBRARY, state)


def test_every_event_of_the_demo_is_stored_as_the_librarys_transcoder_writes_it():
    app = make_app("memory://")
    assert isinstance(app.mapper.transcoder, StoredJSONTranscoder)
    seed_demo(app, say=lambda _: None)
    records = app.recorder.select_notifications(1, 100_000)
    assert len(records) > 100
    for record in records:
        state = LIBRARY.decode(record.state)
        assert record.state == LIBRARY.encode(state), record.topic


def test_a_transcoder_named_in_the_settings_is_the_one_used():
    env = {**persistence_env("memory://"), "TRANSCODER_TOPIC": "eventsourcing.persistence:JSONTranscoder"}
    app = Tramita(env, clock=pinned_clock)
    try:
        assert type(app.mapper.transcoder) is JSONTranscoder
    finally:
        app.close()


# ---------------------------------------------------------------------------------------------- reading


def read(transcoder: JSONTranscoder, data: object) -> str:
    """What a transcoder reads from a row, shown with every value's type (`1`, `1.0` and `True` are equal in
    Python, but not alike in an event), or the type of what it raised."""
    try:
        return typed(transcoder.decode(data))
    except Exception as error:  # noqa: BLE001 - the two must fail alike
        return f"raised {type(error).__name__}"


def typed(value: object) -> str:
    if isinstance(value, dict):
        return "{" + ", ".join(f"{key!r}: {typed(item)}" for key, item in value.items()) + "}"
    if isinstance(value, list):
        return "[" + ", ".join(typed(item) for item in value) + "]"
    return f"{type(value).__name__}:{value!r}"


def test_every_event_of_the_demo_reads_back_as_the_librarys_decoder_reads_it(monkeypatch):
    app = make_app("memory://")
    seed_demo(app, say=lambda _: None)
    records = app.recorder.select_notifications(1, 100_000)
    assert len(records) > 100
    expected = [read(LIBRARY, record.state) for record in records]

    def refused(self: JSONTranscoder, data: bytes) -> None:
        raise AssertionError("an event of the demo was left to the library's decoder")

    monkeypatch.setattr(JSONTranscoder, "decode", refused)  # each is read by orjson, none by the library
    assert [read(STORED, record.state) for record in records] == expected


@settings(max_examples=600, deadline=None)
@given(st.dictionaries(TEXT, VALUES, max_size=8))
def test_a_state_reads_back_as_the_librarys_decoder_reads_it(state):
    for encoded in {written(LIBRARY, state), written(STORED, state)}:
        if isinstance(encoded, bytes):
            assert read(STORED, encoded) == read(LIBRARY, encoded)


# Rows a database administrator may write: any JSON, transcoding objects of every shape (names registered or
# not, members missing or extra, nested inside one another), and those texts damaged byte by byte.
JSON_LEAVES = st.one_of(st.none(), st.booleans(), INTEGERS, st.floats(), TEXT,
                        st.sampled_from(["date_iso", "datetime_iso", "decimal_str", "uuid_hex", "tuple", "nope"]))
JSON_VALUES = st.recursive(
    JSON_LEAVES,
    lambda inner: st.one_of(
        st.lists(inner, max_size=4), st.dictionaries(TEXT, inner, max_size=4),
        st.fixed_dictionaries({"_type_": inner, "_data_": inner}),
        st.fixed_dictionaries({"_type_": st.sampled_from(["date_iso", "datetime_iso", "decimal_str", "uuid_hex"]),
                               "_data_": st.sampled_from(["2014-01-02", "2026-11-30T12:00:00+00:00", "1.50",
                                                          "e2964cb3cff750a997d417b4bc08691d", "x", ""])}),
        st.fixed_dictionaries({"_type_": inner}), st.fixed_dictionaries({"_type_": inner, "_data_": inner, "x": inner}),
    ),
    max_leaves=16,
)
LITERALS = [b"NaN", b"-Infinity", b"1E400", b"18446744073709551616", b"-9223372036854775809", b"1.0", b"-0",
            b'"\\ud800"', b'"\xed\xa0\x80"', b"\xef\xbb\xbf", b"\x00", b" ", b"\t", b"\x0c", b"\xa0", b",", b"}", b"]"]


def json_text(value: object) -> bytes:
    return json.dumps(value, ensure_ascii=False, allow_nan=True).encode("utf-8", "surrogatepass")


@settings(max_examples=1000, deadline=None)
@given(JSON_VALUES, st.lists(st.tuples(st.integers(0, 400), st.integers(0, 3), st.sampled_from(LITERALS)),
                             max_size=3))
def test_any_row_even_damaged_reads_as_the_librarys_decoder_reads_it_or_fails_alike(value, damage):
    data = json_text(value)
    assert read(STORED, data) == read(LIBRARY, data)
    for at, cut, literal in damage:
        at = min(at, len(data))
        data = data[:at] + literal + data[at + cut:]
        assert read(STORED, data) == read(LIBRARY, data), data


@pytest.mark.parametrize("data", [
    b'{"n":18446744073709551616}', b'{"n":-9223372036854775809}', b'[123456789012345678901234567890]',
    b'{"x":NaN}', b'{"x":1E400}', b'{"x":0.1}', b'{"s":"\\ud800"}', b'"\xed\xa0\x80"', b"\xef\xbb\xbf{}",
    b'{"a":1,"a":2}', b'{"_type_":"date_iso","_data_":"2014-13-01"}', b'{"_type_":"nope","_data_":1}',
    b'{"_type_":["date_iso"],"_data_":"2014-01-02"}', b'{"_type_":"date_iso","_data_":"2014-01-02","x":1}',
    b'{"_type_":{"_type_":"decimal_str","_data_":"1"},"_data_":"2014-01-02"}', b"[" * 1100 + b"]" * 1100,
    b"[" * 990 + b"]" * 990, b"", b"{} x",
])
def test_a_row_orjson_would_read_otherwise_is_read_by_the_librarys_decoder(data):
    assert read(STORED, data) == read(LIBRARY, data)


def test_text_rather_than_bytes_is_left_to_the_librarys_decoder():
    assert read(STORED, '{"a":1}') == read(LIBRARY, '{"a":1}') == "raised AttributeError"
    assert read(STORED, bytearray(b'{"a":1}')) == read(LIBRARY, bytearray(b'{"a":1}'))


@pytest.mark.parametrize("topic", ["tramita.__main__:Case.PetitionFiled", "os:system", "", None, b"domain.case:Case"])
def test_the_application_reads_no_event_whose_topic_names_a_module_outside_the_domain(topic):
    """Resolving a topic imports its module: a topic a database administrator wrote is refused before that."""
    app = make_app("memory://")
    with pytest.raises(TopicError, match="not an event class of the domain package"):
        app.mapper.to_domain_event(StoredEvent(uuid4(), 1, topic, b"{}"))
    assert "tramita.__main__" not in sys.modules
    assert isinstance(app.mapper, DomainMapper)
