"""`/docs` in a real headless Chromium (Debian's `chromium` and `chromium-driver`, driven by selenium): Swagger UI,
served by the app under its Content-Security-Policy, renders the OpenAPI 3.1 document, every operation, and an
operation's response example taken from the demo.

Without Chromium or its driver this is skipped, unless CI is set: then it fails, as the page tests do. Every wait is
explicit, with a generous deadline; none is a fixed sleep.
"""

from __future__ import annotations

import shutil
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from werkzeug.serving import make_server

from tests.servers import in_ci
from tramita.web import create_app

pytestmark = pytest.mark.slow

CHROMIUM = ("chromium", "chromium-browser")
#: Seconds the page, or an element of it, has to appear, however loaded the machine.
WAIT_SECONDS = 120


def browser_binaries() -> tuple[str, str] | None:
    browser = next((found for name in CHROMIUM if (found := shutil.which(name))), None)
    driver = shutil.which("chromedriver") or ("/usr/bin/chromedriver" if Path("/usr/bin/chromedriver").exists()
                                              else None)
    return (browser, driver) if browser and driver else None


def missing(reason: str) -> None:
    if in_ci():
        pytest.fail(f"browser test: {reason}, and CI is set, so this is an error, not a skip", pytrace=False)
    pytest.skip(f"browser test: {reason}")


@pytest.fixture(scope="module")
def served() -> Iterator[str]:
    """The app over an in-memory store, on a loopback port of its own, in a thread."""
    server = make_server("127.0.0.1", 0, create_app({"TRAMITA_DATABASE_URL": "memory://"}), threaded=True)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_port}"
    finally:
        server.shutdown()
        thread.join(timeout=WAIT_SECONDS)


@pytest.fixture(scope="module")
def browser(served):  # noqa: ANN001, ANN201, ARG001 - the server first
    found = browser_binaries()
    if found is None:
        missing("chromium or chromedriver is not installed (Debian: apt-get install chromium chromium-driver)")
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = found[0]
    for argument in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu",
                     "--window-size=1400,1000", "--no-first-run", "--disable-extensions"):
        options.add_argument(argument)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(options=options, service=Service(executable_path=found[1]))
    driver.set_page_load_timeout(WAIT_SECONDS)
    try:
        yield driver
    finally:
        driver.quit()


def test_swagger_ui_renders_the_openapi_3_1_document_and_a_response_example_from_the_demo(served, browser):
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    wait = WebDriverWait(browser, WAIT_SECONDS)
    browser.get(f"{served}/docs")
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
