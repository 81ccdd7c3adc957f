"""The API's JSON answers (api/app.py `JSONProvider`): written by orjson, they hold the same values the standard
library's encoder wrote, and what orjson cannot write is still written."""

from __future__ import annotations

import json
from datetime import date, datetime, timezone
from decimal import Decimal
from uuid import UUID

from flask import Flask

from api.app import JSONProvider

VALUES = {"day": date(1991, 12, 18), "at": datetime(2026, 3, 5, 14, 30, 5, 120, tzinfo=timezone.utc),
          "naive": datetime(2026, 3, 5, 14, 30), "area": Decimal("27975.427"), "id": UUID(int=7),
          "name": "Feijó", "counts": {1: "um"}, "items": ("art-4", None, True, 0.1)}


def provider() -> JSONProvider:
    return JSONProvider(Flask("json-test"))


def test_an_answer_holds_the_same_values_the_standard_library_wrote():
    written = provider().dumps(VALUES, separators=(",", ":"))
    assert json.loads(written) == json.loads(json.dumps(VALUES, default=JSONProvider.default))
    assert json.loads(written)["at"] == "2026-03-05T14:30:05.000120+00:00"
    assert json.loads(written)["area"] == "27975.427"


def test_an_integer_beyond_64_bits_and_a_lone_surrogate_are_still_written():
    assert json.loads(provider().dumps({"size": 2**70})) == {"size": 2**70}
    assert json.loads(provider().dumps({"text": "\ud800"})) == {"text": "\ud800"}


def test_flasks_own_options_still_apply():
    assert provider().dumps({"a": [1]}, indent=2) == '{\n  "a": [\n    1\n  ]\n}'
