"""The CLI on a SQLite file: seed the demo, replay a case as of a date, verify every chain."""

from __future__ import annotations

import pytest

from tramita.cli import main


@pytest.fixture
def database(tmp_path, monkeypatch):
    monkeypatch.setenv("TRAMITA_DATABASE_URL", f"sqlite:///{tmp_path / 'var' / 'tramita.sqlite'}")
    return tmp_path


def test_seed_demo_records_four_cases_once_and_every_chain_verifies(database, capsys):
    assert main(["seed-demo"]) == 0
    out = capsys.readouterr().out
    assert "recusado como esperado: cf-art-18-par-4" in out and "recusado como esperado: art-38" in out
    assert "art-17-par-unico: o nome 'Extrema' repete o do Município existente Extrema (MG)" in out
    assert "LC35-1991-0001: instalado em 01/01/1993 (Art. 19)" in out  # the story in the user's language
    assert main(["seed-demo"]) == 0
    assert "processos da demonstração: já registrados" in capsys.readouterr().out
    assert main(["verify"]) == 0
    assert "0 altered" in capsys.readouterr().out


def test_seed_demo_stores_each_illustrative_document_once_and_attaches_it_once_to_the_act_citing_it(
        database, capsys):
    import json
    import sqlite3

    from domain.demo import DOCUMENTS_1991
    from audit.demo_files import demo_files, described

    assert main(["seed-demo"]) == 0 and main(["seed-demo"]) == 0
    assert "documentos: 3 PDFs ilustrativos da demonstração guardados" in capsys.readouterr().out
    with sqlite3.connect(database / "var" / "tramita.sqlite") as db:
        stored = dict(db.execute("SELECT sha256, content FROM documents").fetchall())
    expected = described(demo_files())
    assert {digest: bytes(content) for digest, content in stored.items()} == {
        expected[reference]["sha256"]: content for reference, content in demo_files().items()}
    assert main(["replay", "LC35-1991-0001", "--json"]) == 0
    events = json.loads(capsys.readouterr().out)["events"]
    attached = [(e["payload"]["act"], d["sha256"]) for e in events if e["type"] == "Case.DocumentsAttached"
                for d in e["payload"]["documents"]]
    assert sorted(attached) == sorted((act, expected[reference]["sha256"])
                                      for reference, (act, _) in DOCUMENTS_1991.items())


def test_replay_as_of_a_legal_date_shows_the_timeline_up_to_that_date(database, capsys):
    main(["seed-demo"])
    capsys.readouterr()
    assert main(["replay", "LC35-1991-0001", "--as-of", "1992-01-08"]) == 0
    out = capsys.readouterr().out
    assert "LC35-1991-0001 (criação de município): fase: resultado comunicado em 08/01/1992" in out
    assert "ResultCommunicated" in out and "LawEnacted" not in out
    assert main(["replay", "LC35-1991-0001"]) == 0
    full = capsys.readouterr().out
    assert "fase: concluído" in full and "ledger-transfer:1200450 (em atraso)" in full


def test_replay_of_an_unknown_case_says_so(database, capsys):
    main(["seed-demo"])
    capsys.readouterr()
    assert main(["replay", "LC35-2026-0099"]) == 2
    assert "processo LC35-2026-0099 não encontrado" in capsys.readouterr().err


def test_project_before_migrate_says_to_run_migrate(database_url, monkeypatch, capsys):
    monkeypatch.setenv("TRAMITA_DATABASE_URL", database_url)
    assert main(["project", "--once"]) == 2
    assert "rode `tramita migrate` antes" in capsys.readouterr().err


def test_migrate_project_and_rebuild_one_projection_from_the_command_line(database_url, monkeypatch, capsys):
    monkeypatch.setenv("TRAMITA_DATABASE_URL", database_url)
    assert main(["migrate"]) == 0
    assert ("projeções criadas: cases, deadlines, freezes, alerts, deliveries, attachments, municipalities"
            in capsys.readouterr().out)
    assert main(["seed-demo"]) == 0
    assert main(["project", "--once"]) == 0
    projected = capsys.readouterr().out
    assert "notificações projetadas" in projected and "'cases': 0" not in projected
    assert main(["rebuild", "--projection", "deadlines"]) == 0
    captured = capsys.readouterr()
    assert "deadlines reconstruída(s) a partir de" in captured.out and "notificações" in captured.err
    assert main(["migrate"]) == 0
    assert "nenhuma (todas presentes)" in capsys.readouterr().out


def test_a_rebuild_another_rebuild_took_over_says_so_and_leaves_the_live_tables(database_url, monkeypatch, capsys):
    import projections.rebuild as rebuild_module
    from projections.projector import Projector
    from infrastructure.store import open_store
    from tests.stores import make_app

    monkeypatch.setenv("TRAMITA_DATABASE_URL", database_url)
    assert main(["migrate"]) == 0 and main(["seed-demo"]) == 0 and main(["project", "--once"]) == 0
    capsys.readouterr()
    store = open_store(database_url)
    live = store.query("SELECT * FROM deadlines ORDER BY case_id, deadline")
    pass_alone = rebuild_module.build_by_aggregate

    def another_starts_after_this_pass(*args, **kwargs):
        built = pass_alone(*args, **kwargs)
        monkeypatch.setattr(rebuild_module, "build_by_aggregate", lambda *a, **k: 0 / 0)  # it dies while filling
        with pytest.raises(ZeroDivisionError):
            Projector(make_app(database_url), store, names=["deadlines"]).rebuild()
        return built

    monkeypatch.setattr(rebuild_module, "build_by_aggregate", another_starts_after_this_pass)
    assert main(["rebuild", "--projection", "deadlines"]) == 2
    error = capsys.readouterr().err
    assert "another rebuild started since and took these side tables over" in error and "Traceback" not in error
    assert store.query("SELECT * FROM deadlines ORDER BY case_id, deadline") == live != []
    store.close()


def test_the_demo_gives_the_scheduler_the_tre_s_missed_answer_and_the_ibge_s_breach_to_alert(database, capsys):
    import json

    main(["migrate"])
    main(["seed-demo"])
    capsys.readouterr()
    assert main(["scheduler", "--once"]) == 0
    lines = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    alerts = sorted((a["case_number"], a["who"], a["kind"], a["article"], a["due_on"])
                    for a in lines if a["event"] == "alert")
    # Received Thu 2026-10-08: 30 days end on Sat 11-07, so the answers were due Mon 2026-11-09 (Art. 10).
    assert alerts == [("LC35-2026-0003", "ibge", "breach", "art-10-par-1", "2026-11-09"),
                      ("LC35-2026-0003", "ibge", "missed", "art-10", "2026-11-09"),
                      ("LC35-2026-0003", "tre", "missed", "art-10", "2026-11-09")]


def test_a_deployment_seeded_with_the_registry_alone_holds_no_case_and_accepts_a_mayor_and_a_petition(
        database, capsys):
    """The registry without the demo (`tramita seed-registry`, once): Acre's municipalities are there, no case
    is, a municipal token can be issued for one of them, and its mayor files a district petition (Art. 31)."""
    from tests.api_client import ApiHarness

    url = f"sqlite:///{database / 'var' / 'tramita.sqlite'}"
    assert main(["seed-registry"]) == 0
    assert "cadastro: 22 municípios registrados" in capsys.readouterr().out
    assert main(["seed-registry"]) == 0
    assert "já registrado (nada foi gravado)" in capsys.readouterr().out
    assert main(["token", "create", "--role", "mayor", "--municipality", "1200302", "--name", "Prefeitura de Feijó"]) \
        == 0
    mayor = capsys.readouterr().out.strip().splitlines()[-1]
    api = ApiHarness(url)
    try:
        stored = api.app.recorder.select_notifications(0, 10_000, inclusive_of_start=False)
        assert {n.topic.rsplit(":", 1)[1].split(".")[0] for n in stored} == {"Municipality", "AccessToken"}
        assert len([n for n in stored if n.topic.endswith("Municipality.Registered")]) == 22
        opened = api.client.post("/cases", headers={"Authorization": f"Bearer {mayor}"}, json={
            "occurred_on": "2026-03-10", "kind": "district_creation", "municipalities": ["1200302"],
            "district": "Vila Nova"})
        assert opened.status_code == 201, opened.get_json()
        assert opened.get_json()["number"] == "LC35-2026-0001"
    finally:
        api.close()
