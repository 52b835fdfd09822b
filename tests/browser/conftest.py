"""Fixtures for the browser tests: the served demo on a free port, and Debian's chromium.

The browser is Debian's ``chromium``, driven by Selenium through Debian's ``chromium-driver``;
nothing is downloaded at test time. Where either is missing the tests skip, saying why, except
in CI (``CI=true``), where ``.ci/run`` installs both and a missing browser fails the run.
"""

import base64
import os
import shutil
import socket
import threading
import time
import urllib.request
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
import uvicorn
from selenium import webdriver
from selenium.common.exceptions import StaleElementReferenceException, WebDriverException
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.webdriver.remote.webdriver import WebDriver
from selenium.webdriver.remote.webelement import WebElement
from selenium.webdriver.support.ui import Select, WebDriverWait

from artifactr.files.apps.libreoffice import LibreOffice, available
from artifactr.files.core.manifests import DOCX
from artifactr.files.programs import serve
from artifactr.files.programs.settings import read_deployment
from tests.clock import Clock

CHROMIUM = os.environ.get("ARTIFACTR_TEST_CHROMIUM", "/usr/bin/chromium")
"""Debian's chromium."""

CHROMEDRIVER = os.environ.get("ARTIFACTR_TEST_CHROMEDRIVER", "/usr/bin/chromedriver")
"""Debian's chromium-driver, which matches it."""

REQUIRE_BROWSER = os.environ.get("CI") == "true"
"""In CI the browser must be there: a skip would hide the tests."""

SCREENS = Path(os.environ.get("ARTIFACTR_SCREENS", Path(__file__).parents[2] / "out" / "screens"))
"""Where each screen's screenshot is saved (``ARTIFACTR_SCREENS=docs/screens`` for the docs)."""


def need_browser() -> None:
    """Skip (fail in CI) unless chromium and its driver are installed."""
    missing = [path for path in (CHROMIUM, CHROMEDRIVER) if shutil.which(path) is None]
    if missing:
        message = f"not installed: {', '.join(missing)} (apt-get install chromium chromium-driver)"
        if REQUIRE_BROWSER:
            pytest.fail(message)
        pytest.skip(message)


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@pytest.fixture
def clock() -> Clock:
    """The served demo's clock: fixed at 2026-11-30T12:00:00Z until a test moves it."""
    return Clock()


@pytest.fixture
def served(tmp_path: Path, clock: Clock) -> Iterator[str]:
    """The served demo on a fresh database, with its generated document; its base URL."""
    port = free_port()
    base_url = f"http://127.0.0.1:{port}"
    app = serve.create_app(
        tmp_path / "serve.db",
        deployment=read_deployment(),  # the embedded default, with what a test set (an editor)
        base_url=base_url,
        corpus=tmp_path / "no-corpus",
        say=lambda _: None,
        native_app=LibreOffice() if available().ok else None,
        clock=clock,
    )
    config = uvicorn.Config(app, host="127.0.0.1", port=port, log_config=None, access_log=False)
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run)
    thread.start()
    try:
        for _ in range(400):
            if server.started or not thread.is_alive():
                break
            time.sleep(0.05)
        assert server.started, "the served demo did not start"
        yield base_url
    finally:
        server.should_exit = True
        thread.join(timeout=30)


GONE = "does not belong to the document"
"""How chromium's driver says, now and then, that a page has gone: not as a stale element."""


def left(page: WebElement) -> Callable[[WebDriver], bool]:
    """Whether the browser has left ``page`` (its ``html``) for the page it navigated to.

    Selenium's ``staleness_of`` knows only the stale-element error; chromium's driver sometimes
    answers instead that the node does not belong to the document (SeleniumHQ/selenium#15401),
    which means the same thing and used to fail the test that clicked.
    """

    def gone(_: WebDriver) -> bool:
        try:
            page.is_enabled()
        except StaleElementReferenceException:
            return True
        except WebDriverException as error:
            if GONE in (error.msg or ""):
                return True
            raise
        return False

    return gone


@dataclass
class Browser:
    """A headless chromium on the served demo, and where its downloads go."""

    driver: WebDriver
    base_url: str
    downloads: Path
    clock: Clock

    def open(self, path: str = "/") -> None:
        self.driver.get(self.base_url + path)

    def act_as(self, person: str) -> None:
        """Choose a person with the page's own form."""
        Select(self.driver.find_element(By.NAME, "person")).select_by_value(person)
        self.click("Switch")

    def click(self, text: str) -> None:
        """Click a button or link by its text, and wait for the page it leads to."""
        self.press(
            self.driver.find_element(By.XPATH, f"//*[self::button or self::a][text()={text!r}]")
        )

    def press(self, element: WebElement) -> None:
        """Click ``element``, a button or link, and wait for the page it leads to.

        A click returns once chromium has taken it, not once the next page has loaded: looking
        for that page's parts straight after a bare ``click()`` fails whenever the server takes
        longer than the driver's next question (it did, once, in CI).
        """
        page = self.driver.find_element(By.TAG_NAME, "html")
        element.click()
        wait = WebDriverWait(self.driver, 30)
        wait.until(left(page))
        wait.until(lambda driver: driver.execute_script("return document.readyState") == "complete")

    def buttons(self) -> list[str]:
        return [b.text for b in self.driver.find_elements(By.TAG_NAME, "button")]

    def call(self, method: str, path: str, user: str, body: bytes | None = None) -> bytes:
        """Call the router as ``user`` (its x-user header), as a script or another tab would."""
        request = urllib.request.Request(
            self.base_url + path, data=body, method=method, headers={"x-user": user}
        )
        if body is not None:
            request.add_header("content-type", DOCX)
        with urllib.request.urlopen(request, timeout=60) as response:
            return response.read()

    def text(self) -> str:
        return self.driver.find_element(By.TAG_NAME, "main").text

    def notice(self) -> str:
        return self.driver.find_element(By.CSS_SELECTOR, ".notice").text

    def images_loaded(self) -> list[bool]:
        """Whether each image on the page loaded: its natural width is known."""
        images = self.driver.find_elements(By.TAG_NAME, "img")
        return [
            bool(self.driver.execute_script("return arguments[0].naturalWidth", i)) for i in images
        ]

    def screenshot(self, name: str) -> Path:
        """Save the whole page, beyond the window, as ``<name>.png`` under :data:`SCREENS`."""
        metrics = self.driver.execute_cdp_cmd("Page.getLayoutMetrics", {})
        size = metrics["cssContentSize"]
        clip = {"x": 0, "y": 0, "width": size["width"], "height": min(size["height"], 3000)}
        shot = self.driver.execute_cdp_cmd(
            "Page.captureScreenshot",
            {"format": "png", "captureBeyondViewport": True, "clip": {**clip, "scale": 1}},
        )
        SCREENS.mkdir(parents=True, exist_ok=True)
        path = SCREENS / f"{name}.png"
        path.write_bytes(base64.b64decode(shot["data"]))
        return path

    def downloaded(self, name: str) -> bytes:
        """Wait for a finished download of ``name`` and return its bytes."""
        path = self.downloads / name
        for _ in range(200):
            if path.is_file() and not list(self.downloads.glob("*.crdownload")):
                return path.read_bytes()
            time.sleep(0.05)
        raise AssertionError(f"{name} was not downloaded: {sorted(self.downloads.iterdir())}")


@pytest.fixture
def browser(served: str, tmp_path: Path, clock: Clock) -> Iterator[Browser]:
    need_browser()
    downloads = tmp_path / "downloads"
    downloads.mkdir()
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for argument in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu"):
        options.add_argument(argument)
    options.add_argument("--window-size=1280,900")
    options.add_experimental_option(
        "prefs",
        {"download.default_directory": str(downloads), "download.prompt_for_download": False},
    )
    driver = webdriver.Chrome(options=options, service=Service(executable_path=CHROMEDRIVER))
    try:
        driver.execute_cdp_cmd(
            "Browser.setDownloadBehavior", {"behavior": "allow", "downloadPath": str(downloads)}
        )
        yield Browser(driver, served, downloads, clock)
    finally:
        driver.quit()
