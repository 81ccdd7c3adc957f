"""The command line speaks Portuguese unless LANG (or LC_MESSAGES, or LC_ALL, as POSIX orders them) asks for English:
its confirmations, summaries and errors, bodies and municipalities by name, dates as dd/mm/aaaa (ISO in English);
every sentence it says has its Portuguese in the pages' catalogue."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from babel.messages.extract import extract_from_dir
from babel.messages.pofile import read_po

from tramita.cli import main

REPO = Path(__file__).resolve().parents[1]
CATALOGUE = REPO / "api" / "translations" / "pt_BR" / "LC_MESSAGES" / "messages.po"
PORTUGUESE, ENGLISH = "pt_BR.UTF-8", "en_US.UTF-8"


@pytest.fixture
def database(tmp_path, monkeypatch):
    monkeypatch.setenv("TRAMITA_DATABASE_URL", f"sqlite:///{tmp_path / 'tramita.sqlite'}")
    for name in ("LC_ALL", "LC_MESSAGES"):
        monkeypatch.delenv(name, raising=False)
    return tmp_path


def said(monkeypatch, capsys, lang: str, *argv: str) -> tuple[int, str, str]:
    """The command run with LANG=`lang`: its exit status, stdout and stderr."""
    monkeypatch.setenv("LANG", lang)
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_the_registry_a_token_and_a_refusal_are_said_in_portuguese_by_default_and_in_english_when_lang_asks(
        database, monkeypatch, capsys):
    assert said(monkeypatch, capsys, PORTUGUESE, "seed-registry")[1] == "cadastro: 22 municípios registrados\n"
    assert said(monkeypatch, capsys, ENGLISH, "seed-registry")[1] == "registry: already seeded (nothing recorded)\n"
    assert said(monkeypatch, capsys, PORTUGUESE, "seed-registry")[1] == "cadastro: já registrado (nada foi gravado)\n"
    code, out, _ = said(monkeypatch, capsys, PORTUGUESE, "token", "create", "--role", "mayor", "--municipality",
                        "1200302", "--name", "Prefeitura de Feijó", "--expires", "2199-12-31")
    first = out.splitlines()[0]
    assert code == 0 and first.endswith(" para Prefeitura de Feijó (Prefeito de Feijó (IBGE 1200302), válido até "
                                        "31/12/2199); mostrado só esta vez:")
    code, out, _ = said(monkeypatch, capsys, ENGLISH, "token", "create", "--role", "mayor", "--municipality",
                        "1200302", "--name", "Prefeitura de Feijó", "--expires", "2199-12-31")
    assert code == 0 and out.splitlines()[0].endswith(
        " for Prefeitura de Feijó (Mayor of Feijó (IBGE 1200302), valid through 2199-12-31); shown this once:")
    assert "ativo até 31/12/2199" in said(monkeypatch, capsys, PORTUGUESE, "token", "list")[1]
    assert "active to 2199-12-31" in said(monkeypatch, capsys, ENGLISH, "token", "list")[1]
    # a refusal of the domain, with its article and its figures, and an error of the command line itself
    assert said(monkeypatch, capsys, PORTUGUESE, "replay", "LC35-2026-0099")[1:] == (
        "", "tramita: processo LC35-2026-0099 não encontrado\n")
    assert said(monkeypatch, capsys, ENGLISH, "replay", "LC35-2026-0099")[2] == "tramita: no case LC35-2026-0099\n"
    assert said(monkeypatch, capsys, PORTUGUESE, "token", "create", "--role", "mayor", "--name", "x")[2] == (
        "tramita: municipality: um token de mayor atua por um Município: informe o seu código IBGE\n")
    assert said(monkeypatch, capsys, PORTUGUESE, "subscription", "add")[2] == (
        "tramita: --url: um webhook precisa do seu endereço; um calendário (--calendar) não leva nenhum\n")
    assert said(monkeypatch, capsys, ENGLISH, "subscription", "add")[2] == (
        "tramita: --url: a webhook needs its address; a calendar (--calendar) takes none\n")


def test_lc_all_decides_before_lang_and_a_c_locale_reads_portuguese(database, monkeypatch, capsys):
    main(["seed-registry"])
    capsys.readouterr()
    monkeypatch.setenv("LC_ALL", "pt_BR.UTF-8")
    assert said(monkeypatch, capsys, ENGLISH, "seed-registry")[1].startswith("cadastro: já registrado")
    monkeypatch.setenv("LC_ALL", "en_GB.UTF-8")
    assert said(monkeypatch, capsys, PORTUGUESE, "seed-registry")[1].startswith("registry: already seeded")
    monkeypatch.delenv("LC_ALL")
    monkeypatch.setenv("LC_MESSAGES", "en_US.UTF-8")
    assert said(monkeypatch, capsys, "C.UTF-8", "seed-registry")[1].startswith("registry: already seeded")
    monkeypatch.delenv("LC_MESSAGES")
    assert said(monkeypatch, capsys, "C.UTF-8", "seed-registry")[1].startswith("cadastro: já registrado")


def test_a_new_process_says_its_summary_in_the_language_of_its_environment(tmp_path):
    environment = {**os.environ, "TRAMITA_DATABASE_URL": f"sqlite:///{tmp_path / 'tramita.sqlite'}"}
    for name in ("LC_ALL", "LC_MESSAGES"):
        environment.pop(name, None)

    def tramita(lang: str, *argv: str) -> str:
        ran = subprocess.run([sys.executable, "-m", "tramita", *argv], cwd=tmp_path,
                             env={**environment, "LANG": lang}, capture_output=True, text=True, timeout=120)
        assert ran.returncode == 0, ran.stderr
        return ran.stdout

    assert tramita(PORTUGUESE, "migrate").startswith("migrado: base de eventos pronta; projeções criadas: cases, ")
    assert tramita(ENGLISH, "migrate") == ("migrated: event store ready; projections created: none (all present)\n")
    assert tramita(PORTUGUESE, "documents", "expire", "--days", "3") == (
        "0 documento(s) removido(s): nenhum ato os citou em 3 dia(s) desde o último envio\n")
    assert tramita(ENGLISH, "documents", "expire", "--days", "3") == (
        "0 document(s) removed: no act cited them within 3 day(s) of their last upload\n")


def test_every_sentence_the_command_line_says_has_its_portuguese_with_the_same_placeholders():
    with CATALOGUE.open("rb") as po:
        catalogue = read_po(po, locale="pt_BR")
    translated = {message.id: message.string for message in catalogue if message.id}
    sentences = {message for _, _, message, _, _ in extract_from_dir(
        str(REPO / "tramita"), [("cli/**.py", "python"), ("side_by_side.py", "python")],
        keywords={"say": None, "worded": None})}
    assert len(sentences) > 50  # the extraction found the commands' sentences
    assert not sorted(s for s in sentences if not translated.get(s))
    assert not [(message.id, errors) for message, errors in catalogue.check() if message.id in sentences]
