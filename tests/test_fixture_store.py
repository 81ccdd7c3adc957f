"""A store written by an earlier tramita (tests/fixtures/v1, see its README) still replays, verifies, projects and
answers the API as it did then: events stored are forever, whatever moves in the code."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from tramita.cli import main
from tests.api_client import ApiHarness

FIXTURE = Path(__file__).resolve().parent / "fixtures" / "v1"
ANSWERS = json.loads((FIXTURE / "answers.json").read_text(encoding="utf-8"))
CLI = json.loads((FIXTURE / "cli.json").read_text(encoding="utf-8"))
#: The lists that answered a bare array then and answer the one envelope of every list now (docs/api.md,
#: "Reading and pagination"): what they listed then is the envelope's `items`, in the same order.
ENVELOPED = ("/alerts", "/deadlines", "/freezes", "/municipalities")
#: What the API now answers otherwise on purpose, each where it is and what it is now. The seed's area has no date
#: of its own (docs/law/registry.md): the area Lei 1.102/1993 gave Manoel Urbano is its area now, where the seed's,
#: dated 2022-08-01 by its events, was shown as the latest.
_MANOEL_URBANO_AREA = {"as_of": "1993-06-01", "source": "Lei 1.102/1993 (LC35-1993-0002)", "value": "1800"}
READ_ANEW = {
    "/municipalities": ((9, "figures", "area_km2"), "[9].figures.area_km2", _MANOEL_URBANO_AREA),
    "/municipalities/1200344": (("figures", "area_km2"), ".figures.area_km2", _MANOEL_URBANO_AREA),
}


def kept(before: Any, now: Any, where: str = "") -> list[str]:
    """Where `now` changed or dropped something `before` had (a dict may gain keys; nothing else may differ)."""
    if isinstance(before, dict):
        if not isinstance(now, dict):
            return [f"{where}: was an object"]
        return [problem for key, value in before.items()
                for problem in (kept(value, now[key], f"{where}.{key}") if key in now else [f"{where}.{key}: dropped"])]
    if isinstance(before, list):
        if not isinstance(now, list) or len(now) != len(before):
            return [f"{where}: was a list of {len(before)}"]
        return [problem for i, (a, b) in enumerate(zip(before, now)) for problem in kept(a, b, f"{where}[{i}]")]
    return [] if before == now else [f"{where}: was {before!r}, is {now!r}"]


def in_order(before: str, now: str) -> bool:
    """Every line printed before is printed now, in the same order (new lines may come between)."""
    lines = iter(now.splitlines())
    return all(any(line == candidate for candidate in lines) for line in before.splitlines())


@pytest.fixture
def store(tmp_path, monkeypatch) -> Path:
    copy = tmp_path / "store.sqlite"
    shutil.copy(FIXTURE / "store.sqlite", copy)
    monkeypatch.setenv("TRAMITA_DATABASE_URL", f"sqlite:///{copy}")
    for name in ("TRAMITA_SIGNING_KEY", "TRAMITA_WITNESS_DIR", "TRAMITA_WITNESS_URL", "TRAMITA_VERIFIER_KEY"):
        monkeypatch.delenv(name, raising=False)
    return copy


def test_each_case_of_an_earlier_store_replays_every_act_it_replayed_then(store, capsys, monkeypatch):
    monkeypatch.setenv("LANG", "en_US.UTF-8")  # the replays were printed in English then
    monkeypatch.delenv("LC_ALL", raising=False)
    monkeypatch.delenv("LC_MESSAGES", raising=False)
    replays = {name.split(" ", 1)[1]: printed for name, printed in CLI.items() if name.startswith("replay ")}
    assert len(replays) == 11
    for number, printed in replays.items():
        assert main(["replay", number]) == printed["rc"] == 0
        title, *acts = printed["out"].splitlines()  # the title now names the kind and the stage in words
        out = capsys.readouterr().out
        assert out.startswith(title.split(" ", 1)[0] + " (") and in_order("\n".join(acts), out), number


def test_an_earlier_store_verifies_intact_under_its_checkpoint_with_its_unsigned_events_covered(store, capsys):
    assert main(["verify", "--key", (FIXTURE / "verifier.key").read_text(encoding="ascii").strip()]) == 0
    printed = capsys.readouterr().out
    assert in_order(CLI["verify"]["out"], printed)
    assert "177 events carry no signature" in printed and "VERDICT: intact" in printed


def test_an_earlier_store_migrates_rebuilds_its_projections_and_answers_the_api_as_it_did(store, capsys):
    assert main(["migrate"]) == 0
    assert main(["rebuild"]) == 0
    harness = ApiHarness(f"sqlite:///{store}")
    try:
        harness.projector.catch_up()
        problems = {}
        for path, answer in ANSWERS.items():
            response = harness.get(path)
            found = [f"status {response.status_code}"] if response.status_code != answer["status"] else []
            found += [f"ETag {response.headers.get('ETag')}"] if response.headers.get("ETag") != answer["etag"] else []
            body = response.get_json()
            if path.split("?")[0] in ENVELOPED and isinstance(answer["body"], list):
                found += [f"total {body['total']}"] if body["total"] < len(answer["body"]) else []
                body = body["items"]
            if path in READ_ANEW:
                keys, where, value = READ_ANEW[path]
                now = body
                for key in keys:
                    now = now[key]
                found += [] if now == value else [f"{where}: is {now!r}, not {value!r}"]
                found += [problem for problem in kept(answer["body"], body) if not problem.startswith(where + ":")
                          and not problem.startswith(where + ".")]
            else:
                found += kept(answer["body"], body)
            if found:
                problems[path] = found[:5]
        assert not problems
        assert len(ANSWERS) == 62
    finally:
        harness.close()


def test_an_earlier_store_s_seeded_area_stands_before_its_date_as_a_new_store_s_does(store):
    """The seed's area also stands before 2022 (domain/statute/acre-municipalities.toml): read from the seed's
    metadata, not from a mark in the seed's events, so a registry seeded before that reading gets it too and a 2004
    dismemberment is judged under Art. 1-I on the same figures whenever the registry was seeded."""
    from datetime import date, datetime, timezone

    from domain.application import Tramita
    from infrastructure.persistence import persistence_env

    app = Tramita(persistence_env(f"sqlite:///{store}"),
                  clock=lambda: datetime(2026, 11, 30, 12, tzinfo=timezone.utc))
    feijo = app.municipality("1200302")
    seeded = feijo.figure_on("area_km2", date(2022, 8, 1))
    assert seeded is not None and feijo.figure_on("area_km2", date(2004, 6, 1)) == seeded
    assert feijo.figure_on("population", date(2004, 6, 1)) is None
