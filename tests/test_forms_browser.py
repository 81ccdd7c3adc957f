"""The clerk's desk in a real headless Chromium against `tramita serve`: a clerk of the Mesa files a creation
petition at /processos/novo (first refused beside its field, with its article), records three acts through the
case page's forms (one with a PDF attached), submits a form drawn before the case moved and is told what changed,
submits a form twice and sees the act once; an auditor sees no form. Screenshots are saved as the pages' test saves
them (TRAMITA_SCREENSHOTS, or var/screenshots/<run>/). Skipped without Chromium unless CI is set; explicit waits
only."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from contextlib import redirect_stdout
from pathlib import Path

import pytest

from tests.servers import serving
from tests.test_api import signatures
from tests.test_forms import tiny_pdf
from tests.test_pages_browser import (  # noqa: F401 - fixtures
    browser, screenshots, serious_violations, shoot, wait_for, wait_until,
)
from tramita.cli import main

#: A municipality no demo case freezes (Art. 38), whose area the petition takes a part of.
CRUZEIRO = "1200203"


def issued(folder: Path, role: str, name: str) -> str:
    out_file = folder / f"token-{role}.txt"
    with out_file.open("w") as out, redirect_stdout(out):
        assert main(["token", "create", "--role", role, "--name", name]) == 0
    return out_file.read_text().splitlines()[-1].strip()


@pytest.fixture(scope="module")
def served(tmp_path_factory) -> Iterator[tuple[str, dict[str, str], Path]]:
    """`tramita serve` on the demo database, with a token of the Mesa and one of an auditor."""
    folder = tmp_path_factory.mktemp("forms-browser")
    env = {"TRAMITA_DATABASE_URL": f"sqlite:///{folder / 'tramita.sqlite'}",
           "TRAMITA_SIGNING_KEY": str(folder / "signing.key"), "TRAMITA_SESSION_KEY": str(folder / "session.key")}
    saved = {name: os.environ.get(name) for name in env}
    os.environ.update(env)
    try:
        for command in (["keys", "init"], ["migrate"], ["seed-demo"], ["project", "--once"]):
            assert main(command) in (0, None), command
        tokens = {"mesa": issued(folder, "assembly-mesa", "Mesa Diretora (servidor)"),
                  "auditor": issued(folder, "auditor", "Tribunal de Contas do Estado")}
        (folder / "peticao.pdf").write_bytes(tiny_pdf())
        with serving(folder, "--workers", "1", env=env) as server:
            yield server.url, tokens, folder
    finally:
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


def sign_in(driver, url: str, token: str) -> None:  # noqa: ANN001
    from selenium.webdriver.common.by import By

    driver.delete_all_cookies()
    driver.get(f"{url}/")
    wait_for(driver, "#token").send_keys(token)
    driver.find_element(By.ID, "sign-in").click()
    wait_until(driver, lambda d: d.current_url.endswith("/processos"))


def fill(driver, name: str, value: str) -> None:  # noqa: ANN001
    """Type into the input of field `name` (what it held cleared first); long text is set at once."""
    element = wait_for(driver, f"[name='{name}']")
    element.clear()
    if len(value) > 200:
        driver.execute_script("arguments[0].value = arguments[1]", element, value)
    else:
        element.send_keys(value)


def submit(driver) -> None:  # noqa: ANN001
    from selenium.webdriver.common.by import By

    driver.find_element(By.ID, "record").click()


def fetched_json(driver, path: str):  # noqa: ANN001, ANN201
    """A read of the JSON API the signed-in reader follows (the session's token)."""
    return json.loads(driver.execute_async_script(
        "const done = arguments[arguments.length - 1];"
        "fetch(arguments[0]).then(r => r.text()).then(done).catch(e => done('null'));", path))


def open_form(driver, url: str, number: str, act: str) -> None:  # noqa: ANN001
    from selenium.webdriver.common.by import By

    driver.get(f"{url}/processos/{number}")
    wait_for(driver, f"[data-write='{act}']")
    driver.find_element(By.CSS_SELECTOR, f"[data-write='{act}']").click()
    wait_for(driver, "#act-form")


def test_a_mesa_clerk_files_a_petition_and_records_acts_through_forms_and_an_auditor_sees_none(
        served, browser, screenshots):  # noqa: F811
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import Select

    url, tokens, folder = served
    sign_in(browser, url, tokens["mesa"])

    # The petition: chosen by kind, drawn from PetitionSchema; first refused beside its field, with its article.
    browser.get(f"{url}/processos/novo")
    wait_for(browser, "[data-kind='creation']").click()
    wait_for(browser, "#act-form")
    fill(browser, "occurred_on", "01/12/2026")
    browser.find_element(By.CSS_SELECTOR, f"input[name='municipalities'][value='{CRUZEIRO}']").click()
    fill(browser, "areas", f"{CRUZEIRO}; ; 1.900,5; Vila Juruá")
    fill(browser, "proposed_name", "Vila Juruá")
    voters = [f"{s['title']}; {s['zone']}; {s['section']}; {CRUZEIRO}" for s in signatures(32)]
    fill(browser, "signatures", "\n".join(voters[:3]))
    fill(browser, "documents.art-4-I", "Certidão IBGE 1/2026")
    shoot(browser, screenshots, "formulario-01-peticao")
    assert serious_violations(browser) == [], "formulario-01-peticao"  # axe-core, in Chromium
    submit(browser)
    beside = wait_for(browser, "[data-field='signatures'] .field-error")
    assert beside.text.startswith("Art. 8:") and "3 assinaturas válidas" in beside.text
    assert browser.find_element(By.NAME, "proposed_name").get_attribute("value") == "Vila Juruá"  # kept
    shoot(browser, screenshots, "formulario-02-recusa-ao-lado-do-campo")
    assert serious_violations(browser) == [], "formulario-02-recusa-ao-lado-do-campo"  # axe-core, in Chromium
    fill(browser, "signatures", "\n".join(voters))
    submit(browser)
    notice = wait_for(browser, "#ato-registrado")
    assert "Registrado: petição" in notice.text
    number = browser.find_element(By.CSS_SELECTOR, "h1 .number").text
    shoot(browser, screenshots, "formulario-03-processo-aberto")

    # Act 1: the requisition.
    open_form(browser, url, number, "requisition-issued")
    fill(browser, "occurred_on", "02/12/2026")
    Select(browser.find_element(By.NAME, "body")).select_by_visible_text("IBGE")
    browser.find_element(By.CSS_SELECTOR, "input[name='items'][value='art-4-I']").click()
    submit(browser)
    wait_for(browser, "#ato-registrado")

    # A form drawn now (version 2) goes stale: in another tab the receipt is recorded with a PDF (act 2).
    open_form(browser, url, number, "requisition-received")
    fill(browser, "occurred_on", "03/12/2026")
    fill(browser, "requisition", "R1")
    first_tab = browser.current_window_handle
    browser.switch_to.new_window("tab")
    open_form(browser, url, number, "requisition-received")
    fill(browser, "occurred_on", "03/12/2026")
    fill(browser, "requisition", "R1")
    browser.find_element(By.NAME, "anexos").send_keys(str(folder / "peticao.pdf"))
    shoot(browser, screenshots, "formulario-04-com-anexo")
    submit(browser)
    wait_for(browser, "#ato-registrado")
    assert browser.find_elements(By.CSS_SELECTOR, "#timeline a.document")  # the PDF, cited on its act
    browser.close()
    browser.switch_to.window(first_tab)
    submit(browser)
    stale = wait_for(browser, "#stale")
    assert "nada foi registrado" in stale.text and "versão 2" in stale.text
    assert "recebimento da requisição" in stale.text.lower() and "03/12/2026" in stale.text
    assert browser.find_element(By.NAME, "requisition").get_attribute("value") == "R1"  # what was entered, kept
    shoot(browser, screenshots, "formulario-05-formulario-desatualizado")
    assert serious_violations(browser) == [], "formulario-05-formulario-desatualizado"  # axe-core, in Chromium
    case = fetched_json(browser, f"/cases/{number}")
    before = case["version"]

    # Act 3, submitted twice with its one key: recorded once.
    open_form(browser, url, number, "case-archived")
    fill(browser, "occurred_on", "04/12/2026")
    fill(browser, "reason", "desistência dos peticionários")
    status = browser.execute_async_script(
        "const done = arguments[arguments.length - 1]; const form = document.getElementById('act-form');"
        "fetch(form.action, {method: 'POST', body: new FormData(form)}).then(r => done(r.status))"
        ".catch(e => done(0));")
    assert status == 200  # the first submit, followed to the case page
    submit(browser)  # the second, from the same form
    wait_for(browser, "#ato-registrado")
    events = fetched_json(browser, f"/cases/{number}/events")
    assert [e["type"] for e in events].count("Case.CaseArchived") == 1
    assert fetched_json(browser, f"/cases/{number}")["version"] == events[-1]["sequence"] > before
    shoot(browser, screenshots, "formulario-06-arquivado-uma-vez")

    # An auditor: no form link, and a form's address is refused.
    browser.find_element(By.ID, "sign-out").click()
    wait_for(browser, "#token")
    sign_in(browser, url, tokens["auditor"])
    browser.get(f"{url}/processos/LC35-2026-0003")
    wait_for(browser, "#next-acts")
    assert not browser.find_elements(By.CSS_SELECTOR, "[data-write]")
    browser.get(f"{url}/processos/novo")
    wait_for(browser, "main h1")
    assert not browser.find_elements(By.ID, "act-form") and "não registra atos" in browser.page_source
    shoot(browser, screenshots, "formulario-07-auditor-sem-formulario")


def test_a_form_fits_a_phone_390_pixels_wide(served, browser, screenshots):  # noqa: F811
    url, tokens, _ = served
    sign_in(browser, url, tokens["mesa"])
    browser.set_window_size(390, 900)
    try:
        browser.get(f"{url}/processos/novo?tipo=dismemberment")
        wait_for(browser, "#act-form")
        width = browser.execute_script("return document.documentElement.scrollWidth")
        inner = browser.execute_script("return window.innerWidth")
        assert width <= inner, (width, inner)
        shoot(browser, screenshots, "formulario-08-telefone")
        assert serious_violations(browser) == [], "formulario-08-telefone"  # axe-core, in Chromium
    finally:
        browser.set_window_size(1400, 1000)


def test_an_act_form_links_its_operation_in_the_api_reference_which_opens_it(served, browser):  # noqa: F811
    from selenium.webdriver.common.by import By

    url, tokens, _ = served
    sign_in(browser, url, tokens["mesa"])
    open_form(browser, url, "LC35-2026-0003", "requisition-issued")
    browser.find_element(By.ID, "api-operation").click()
    wait_until(browser, lambda d: d.current_url.endswith("/docs#/acts/requisition-issued"))
    opened = wait_for(browser, "#operations-acts-requisition-issued.is-open")
    assert "/cases/{case_ref}/acts/requisition-issued" in opened.text
