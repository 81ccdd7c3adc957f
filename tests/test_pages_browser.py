"""The pages in a real headless Chromium (Debian's `chromium` and `chromium-driver`, driven by selenium) against
`tramita serve` running for real: sign in with a token, read the 1991 demo case, switch the view to a legal date,
follow an act's document link (the demo's illustrative PDF, checked by its SHA-256) and the export link, sign
out. A screenshot of each page is saved under var/screenshots/<run>/ (the path is printed;
TRAMITA_SCREENSHOTS names another folder).

Without Chromium or its driver these tests are skipped, unless CI is set: then they fail, as the PostgreSQL tests
do. Every wait is explicit, with a generous deadline; none is a fixed sleep.
"""

from __future__ import annotations

import os
import shutil
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from domain.demo import attachment_name
from tests.servers import REPO, in_ci, serving
from tramita.cli import main
from audit.demo_files import demo_files, described

CHROMIUM = ("chromium", "chromium-browser")
DRIVER = "chromedriver"
#: Seconds any page or element has to appear, however loaded the machine.
WAIT_SECONDS = 90
CASE_1991 = "LC35-1991-0001"


def _browser_binaries() -> tuple[str, str] | None:
    browser = next((found for name in CHROMIUM if (found := shutil.which(name))), None)
    driver = shutil.which(DRIVER) or ("/usr/bin/chromedriver" if Path("/usr/bin/chromedriver").exists() else None)
    return (browser, driver) if browser and driver else None


def _missing(reason: str) -> None:
    if in_ci():
        pytest.fail(f"browser tests: {reason}, and CI is set, so this is an error, not a skip", pytrace=False)
    pytest.skip(f"browser tests: {reason}")


@pytest.fixture(scope="module")
def screenshots() -> Path:
    folder = Path(os.environ.get("TRAMITA_SCREENSHOTS") or REPO / "var" / "screenshots" / time.strftime(
        "%Y%m%d-%H%M%S"))
    folder.mkdir(parents=True, exist_ok=True)
    print(f"\nscreenshots of the pages: {folder}")
    return folder


@pytest.fixture(scope="module")
def served(tmp_path_factory) -> Iterator[tuple[str, str]]:
    """`tramita serve` on a demo database with a signed checkpoint, and an auditor's token."""
    folder = tmp_path_factory.mktemp("browser")
    env = {"TRAMITA_DATABASE_URL": f"sqlite:///{folder / 'tramita.sqlite'}",
           "TRAMITA_SIGNING_KEY": str(folder / "signing.key"), "TRAMITA_SESSION_KEY": str(folder / "session.key")}
    saved = {name: os.environ.get(name) for name in env}
    os.environ.update(env)
    try:
        for command in (["keys", "init"], ["migrate"], ["seed-demo"], ["project", "--once"], ["checkpoint"]):
            assert main(command) in (0, None), command
        issued = folder / "token.txt"
        from contextlib import redirect_stdout

        with issued.open("w") as out, redirect_stdout(out):
            assert main(["token", "create", "--role", "auditor", "--name", "Tribunal de Contas do Estado"]) == 0
        token = issued.read_text().splitlines()[-1].strip()
        with serving(folder, "--workers", "1", env=env) as server:
            yield server.url, token
    finally:
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


@pytest.fixture(scope="module")
def browser(served):  # noqa: ANN201, ARG001 - the server first: a failing start is reported before the browser
    found = _browser_binaries()
    if found is None:
        _missing("chromium or chromedriver is not installed (Debian: apt-get install chromium chromium-driver)")
    try:
        from selenium import webdriver
        from selenium.webdriver.chrome.service import Service
    except ImportError:
        _missing("selenium is not installed (pip install -e '.[test]')")
    options = webdriver.ChromeOptions()
    options.binary_location = found[0]
    for argument in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu",
                     "--window-size=1400,1000", "--lang=pt-BR", "--no-first-run", "--disable-extensions"):
        options.add_argument(argument)
    options.add_experimental_option("prefs", {"intl.accept_languages": "pt-BR,pt"})
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})  # the console: a refused script is an error
    driver = webdriver.Chrome(options=options, service=Service(executable_path=found[1]))
    driver.set_page_load_timeout(WAIT_SECONDS)
    try:
        yield driver
    finally:
        driver.quit()


def wait_for(driver, css: str):  # noqa: ANN001, ANN201
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support import expected_conditions as seen
    from selenium.webdriver.support.ui import WebDriverWait

    return WebDriverWait(driver, WAIT_SECONDS).until(seen.presence_of_element_located((By.CSS_SELECTOR, css)))


def wait_until(driver, condition):  # noqa: ANN001, ANN201
    from selenium.webdriver.support.ui import WebDriverWait

    return WebDriverWait(driver, WAIT_SECONDS).until(lambda d: condition(d))


def shoot(driver, folder: Path, name: str) -> None:  # noqa: ANN001
    driver.save_screenshot(str(folder / f"{name}.png"))


def fetched(driver, link) -> tuple[int, str, str, str]:  # noqa: ANN001
    """Follow a link from the page, as the signed-in reader (its session cookie): status, type, the SHA-256 of the
    bytes (hex) and the first line of the text."""
    return tuple(driver.execute_async_script(
        "const done = arguments[arguments.length - 1];"
        "fetch(arguments[0].href).then(r => r.arrayBuffer().then(async b => {"
        "  const hex = [...new Uint8Array(await crypto.subtle.digest('SHA-256', b))]"
        "    .map(x => x.toString(16).padStart(2, '0')).join('');"
        "  done([r.status, r.headers.get('Content-Type'), hex, new TextDecoder().decode(b).split('\\n')[0]]);"
        "})).catch(e => done([0, '', '', String(e)]));", link))


def test_a_reader_signs_in_reads_the_1991_case_as_of_a_date_follows_a_document_and_the_export_and_signs_out(
        served, browser, screenshots):
    from selenium.webdriver.common.by import By

    url, token = served
    browser.get(f"{url}/processos/{CASE_1991}")
    field = wait_for(browser, "#token")  # no session: sent to sign in, the case kept as the next page
    assert "proximo=" in browser.current_url and "Entrar" in browser.page_source
    shoot(browser, screenshots, "01-entrar")
    field.send_keys(token)
    browser.find_element(By.ID, "sign-in").click()
    wait_until(browser, lambda d: d.current_url.endswith(f"/processos/{CASE_1991}"))
    wait_for(browser, "#timeline tbody tr")
    assert browser.find_element(By.ID, "stage").text == "concluído"
    assert "Tramitação: o andamento do processo" in browser.page_source and "registro tardio" in browser.page_source
    bars = browser.find_elements(By.CSS_SELECTOR, "#deadline-axis svg g.deadline")
    assert bars and all(bar.get_attribute("class").split()[1] in ("met-on-time", "met-late") for bar in bars)
    assert browser.find_element(By.ID, "verdict").get_attribute("class") == "intact"
    assert not browser.find_elements(By.CSS_SELECTOR, "[data-write]")  # an auditor: no write control
    shoot(browser, screenshots, "02-processo")
    browser.find_element(By.ID, "deadline-axis").screenshot(str(screenshots / "02-processo-eixo-dos-prazos.png"))

    day = browser.find_element(By.ID, "as-of")
    browser.execute_script("arguments[0].value = '1992-01-08'", day)
    browser.find_element(By.ID, "as-of-submit").click()
    note = wait_for(browser, "#view-note")
    assert "08/01/1992" in note.text
    assert browser.find_element(By.ID, "stage").text == "resultado comunicado"
    assert browser.find_elements(By.CSS_SELECTOR, "#timeline tr[data-in-view='no']")
    shoot(browser, screenshots, "03-processo-em-1992-01-08")

    decree = "Decreto Legislativo 12/1991"
    link = browser.find_element(By.LINK_TEXT, attachment_name(decree))  # on the act that cites it
    assert "document" in link.get_attribute("class").split()
    status, kind, digest, first = fetched(browser, link)
    assert status == 200 and kind == "application/pdf" and first.startswith("%PDF-"), (status, kind, first)
    assert digest == described(demo_files())[decree]["sha256"] and link.get_attribute("href").endswith(digest)
    status, kind, _, first = fetched(browser, browser.find_element(By.ID, "export-link"))
    assert status == 200 and f'"number": "{CASE_1991}"' in first, (status, first)

    for path, heading, name in (("/processos", "Processos", "04-processos"), ("/prazos", "Prazos", "05-prazos"),
                                ("/alertas", "Alertas", "06-alertas"), ("/municipios", "Municípios", "07-municipios"),
                                ("/municipios/1200302", "Feijó", "08-municipio-feijo"),
                                ("/processos/LC35-2026-0003", "LC35-2026-0003", "09-processo-2026-0003")):
        browser.get(url + path)
        assert wait_for(browser, "main h1").text.startswith(heading) or heading in browser.find_element(
            By.CSS_SELECTOR, "main h1").text, path
        assert not browser.find_elements(By.CSS_SELECTOR, "[data-write]"), path
        forms = browser.find_elements(By.CSS_SELECTOR, "form[method='post']")
        assert [f.get_attribute("action").removeprefix(url) for f in forms] == ["/sessao/sair"], path
        shoot(browser, screenshots, name)

    browser.find_element(By.ID, "sign-out").click()
    wait_for(browser, "#token")
    browser.get(f"{url}/prazos")
    wait_for(browser, "#token")
    assert "proximo=" in browser.current_url
    shoot(browser, screenshots, "10-saiu")


#: Every page of the demo a signed-in reader reaches, and a name for its screenshot.
PAGES = (("/processos", "processos"), (f"/processos/{CASE_1991}", "processo-1991"),
         ("/processos/LC35-2026-0001", "processo-2026-0001"), ("/processos/LC35-2026-0003", "processo-2026-0003"),
         (f"/processos/{CASE_1991}?data=1992-01-08", "processo-1991-em-1992"), ("/prazos", "prazos"),
         ("/alertas", "alertas"), ("/municipios", "municipios"), ("/municipios/1200302", "municipio-feijo"))


def test_on_a_phone_390_pixels_wide_no_page_scrolls_sideways_and_wide_tables_scroll_in_their_own_box(
        served, browser, screenshots):
    from selenium.webdriver.common.by import By

    url, token = served
    browser.execute_cdp_cmd("Emulation.setDeviceMetricsOverride",
                            {"width": 390, "height": 844, "deviceScaleFactor": 2, "mobile": True})
    try:
        browser.get(f"{url}/")
        field = wait_for(browser, "#token")
        assert browser.execute_script("return window.innerWidth") == 390
        assert browser.execute_script("return document.scrollingElement.scrollWidth") == 390, "the sign-in page"
        shoot(browser, screenshots, "celular-00-entrar")
        field.send_keys(token)
        browser.find_element(By.ID, "sign-in").click()
        wait_until(browser, lambda d: "/processos" in d.current_url)
        for path, name in PAGES:
            browser.get(url + path)
            wait_for(browser, "main h1")
            width, inner = browser.execute_script(
                "return [document.scrollingElement.scrollWidth, window.innerWidth]")
            # a mobile browser widens its viewport to the page's content: both stay at the phone's width
            assert (width, inner) == (390, 390), f"{path}: the page is {width} px wide, the viewport {inner} px"
            axis = browser.find_elements(By.CSS_SELECTOR, "#deadline-axis svg")
            if axis:  # the deadline axis fits the width, it does not scroll
                assert axis[0].size["width"] <= 390, path
            shoot(browser, screenshots, f"celular-{name}")
        browser.find_element(By.ID, "sign-out").click()
        wait_for(browser, "#token")
    finally:
        browser.execute_cdp_cmd("Emulation.clearDeviceMetricsOverride", {})


def serious_violations(browser) -> list[str]:  # noqa: ANN001
    """axe-core's serious and critical violations on the page the browser shows: rule, help, first element."""
    from axe_core_python.selenium import Axe

    found = Axe().run(browser)["violations"]
    return [f"{v['id']} ({v['impact']}): {v['help']} at {v['nodes'][0]['target']}" for v in found
            if v["impact"] in ("serious", "critical")]


@pytest.mark.parametrize("width", [1366, 390])
def test_axe_core_finds_no_serious_or_critical_violation_on_any_page_at_a_desktop_s_or_a_phone_s_width(
        served, browser, width):
    from selenium.webdriver.common.by import By

    url, token = served
    browser.execute_cdp_cmd("Emulation.setDeviceMetricsOverride",
                            {"width": width, "height": 900, "deviceScaleFactor": 1, "mobile": width < 600})
    try:
        browser.get(f"{url}/")
        field = wait_for(browser, "#token")
        assert serious_violations(browser) == [], "/"
        field.send_keys(token)
        browser.find_element(By.ID, "sign-in").click()
        wait_until(browser, lambda d: "/processos" in d.current_url)
        for path, _ in PAGES:
            browser.get(url + path)
            wait_for(browser, "main h1")
            assert serious_violations(browser) == [], path
    finally:
        browser.delete_all_cookies()  # signed out whatever happened, for the next test
        browser.execute_cdp_cmd("Emulation.clearDeviceMetricsOverride", {})


def test_swagger_ui_renders_the_openapi_3_1_document_and_a_response_example_from_the_demo(served, browser):
    """/docs under its Content-Security-Policy: Swagger UI renders the OpenAPI 3.1 document, every operation, and an
    operation's response example taken from the demo."""
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    wait = WebDriverWait(browser, WAIT_SECONDS)
    browser.get(f"{served[0]}/docs")
    wait.until(lambda d: len(d.find_elements(By.CSS_SELECTOR, ".opblock")) >= 58)
    assert "OAS 3.1" in browser.find_element(By.CSS_SELECTOR, ".info").text
    assert "Unable to render" not in browser.page_source
    case = next(block for block in browser.find_elements(By.CSS_SELECTOR, ".opblock-get")
                if block.find_element(By.CSS_SELECTOR, ".opblock-summary-path").text.strip() == "/cases/{case_ref}")
    case.find_element(By.CSS_SELECTOR, ".opblock-summary-control").click()
    wait.until(lambda d: "LC35-1991-0001" in case.find_element(By.CSS_SELECTOR, ".responses-wrapper").text)
    refused = [entry["message"] for entry in browser.get_log("browser")  # the browser asks for a favicon itself
               if "Content Security Policy" in entry["message"] or entry["level"] == "SEVERE"
               and "/favicon.ico" not in entry["message"]]
    assert refused == []
