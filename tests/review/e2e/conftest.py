"""A real headless Chromium (Debian's `chromium` and `chromium-driver`, driven by selenium 4)
against pytest-django's live server, which serves /static/ through staticfiles' finders.

One browser serves the whole test session; each test starts with no cookies. With
MEMORYHUB_SCREENSHOTS set to a folder, every page a test visits is saved there as a PNG
(.ci/run sets it per backend run). A missing browser fails the tests: CI installs it.
"""

import os
import re
import shutil
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlsplit

import pytest
from selenium import webdriver
from selenium.common.exceptions import TimeoutException, WebDriverException
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.webdriver.remote.webdriver import WebDriver
from selenium.webdriver.remote.webelement import WebElement
from selenium.webdriver.support import expected_conditions as EC
from selenium.webdriver.support.ui import WebDriverWait

WAIT_SECONDS = 15
SCREENSHOTS_ENV = "MEMORYHUB_SCREENSHOTS"


def _chromium() -> tuple[str, str]:
    browser = shutil.which("chromium") or shutil.which("chromium-browser")
    driver = shutil.which("chromedriver")
    if browser is None or driver is None:
        pytest.fail(
            "the end-to-end tests need Debian's chromium and chromium-driver packages "
            "(apt-get install chromium chromium-driver; .ci/run installs them)",
            pytrace=False,
        )
    return browser, driver


@pytest.fixture(scope="session")
def chromium() -> Iterator[WebDriver]:
    """One headless Chromium for the session."""
    browser, driver_path = _chromium()
    options = webdriver.ChromeOptions()
    options.binary_location = browser
    for arg in (
        "--headless=new",
        "--no-sandbox",
        "--disable-dev-shm-usage",
        "--window-size=1280,900",
    ):
        options.add_argument(arg)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(service=Service(executable_path=driver_path), options=options)
    driver.set_page_load_timeout(WAIT_SECONDS * 2)
    try:
        yield driver
    finally:
        driver.quit()


def _slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")[:80] or "root"


@dataclass
class Browser:
    """The browser pointed at the live server, with the waits and checks every flow needs."""

    driver: WebDriver
    base_url: str
    test_name: str
    shots_dir: Path | None
    shots: list[Path] = field(default_factory=list)

    # -- navigation ---------------------------------------------------------------------------

    def visit(self, path: str) -> None:
        """Open a same-site path and wait for the page; screenshot it."""
        self.driver.get(self.base_url + path)
        self._loaded()

    def submit(self, element: WebElement) -> None:
        """Click a button or link that loads a new page, and wait until it has."""
        # A flag on the old document's window: gone once the new document has replaced it
        # (sturdier than waiting for a stale element, which chromedriver can report as an
        # inspector error while the old document is torn down).
        self.driver.execute_script("window.__memoryhubOldPage = true;")
        element.click()
        WebDriverWait(self.driver, WAIT_SECONDS, ignored_exceptions=(WebDriverException,)).until(
            lambda d: d.execute_script("return window.__memoryhubOldPage === undefined")
        )
        self._loaded()

    def _loaded(self) -> None:
        WebDriverWait(self.driver, WAIT_SECONDS, ignored_exceptions=(WebDriverException,)).until(
            lambda d: d.execute_script("return document.readyState") == "complete"
        )
        self.assert_no_console_errors()
        self.screenshot()

    def login(self, username: str, password: str) -> None:
        """Log in through the real form at /accounts/login/ (the one on screen, if any, so a
        ?next= it carries is kept)."""
        if not self.path.startswith("/accounts/login/"):
            self.visit("/accounts/login/")
        self.driver.find_element(By.NAME, "username").send_keys(username)
        self.driver.find_element(By.NAME, "password").send_keys(password)
        self.submit(self.driver.find_element(By.CSS_SELECTOR, "form button[type=submit]"))

    # -- reading ------------------------------------------------------------------------------

    @property
    def path(self) -> str:
        """The current path and query, without the live server's origin."""
        url = urlsplit(self.driver.current_url)
        return url.path + (f"?{url.query}" if url.query else "")

    def one(self, css: str) -> WebElement:
        return self.driver.find_element(By.CSS_SELECTOR, css)

    def all(self, css: str) -> list[WebElement]:
        return self.driver.find_elements(By.CSS_SELECTOR, css)

    def texts(self, css: str) -> list[str]:
        return [e.text for e in self.all(css)]

    def wait_for(self, css: str, *, text: str | None = None) -> WebElement:
        """The first element matching `css` (holding `text`, when given), once it is visible."""
        condition = (
            EC.visibility_of_element_located((By.CSS_SELECTOR, css))
            if text is None
            else EC.text_to_be_present_in_element((By.CSS_SELECTOR, css), text)
        )
        try:
            found = WebDriverWait(self.driver, WAIT_SECONDS).until(condition)
        except TimeoutException:
            raise AssertionError(f"no {css!r} with {text!r} on {self.path}") from None
        return found if isinstance(found, WebElement) else self.one(css)

    def assert_no_console_errors(self) -> None:
        """A page whose script or stylesheet failed to load logs an error: none may."""
        errors = [
            entry["message"]
            for entry in self.driver.get_log("browser")
            if entry["level"] == "SEVERE" and "favicon.ico" not in entry["message"]
        ]
        assert errors == [], f"console errors on {self.path}"

    def assert_stylesheet_applied(self) -> None:
        """memoryhub.css was served from /static/ and is in effect."""
        sheets = self.driver.execute_script(
            "return [...document.styleSheets].map(s => [s.href, s.cssRules.length])"
        )
        ours = [(href, n) for href, n in sheets if href and href.endswith("/css/memoryhub.css")]
        assert len(ours) == 1, sheets
        assert ours[0][1] > 0, "memoryhub.css has no rules"

    # -- screenshots --------------------------------------------------------------------------

    def show(self, element: WebElement, label: str) -> None:
        """Scroll `element` to the middle of the window and screenshot the page there."""
        self.driver.execute_script("arguments[0].scrollIntoView({block: 'center'})", element)
        self.screenshot(label)

    def screenshot(self, label: str = "") -> Path | None:
        """Save the page as <test>-<nn>-<path>.png when MEMORYHUB_SCREENSHOTS is set."""
        if self.shots_dir is None:
            return None
        name = f"{self.test_name}-{len(self.shots) + 1:02d}-{_slug(label or self.path)}.png"
        target = self.shots_dir / name
        assert self.driver.save_screenshot(str(target)), f"could not save {target}"
        self.shots.append(target)
        return target


@pytest.fixture
def browser(chromium: WebDriver, live_server, request) -> Iterator[Browser]:
    """The session's Chromium, cookies cleared, pointed at the live server."""
    folder = os.environ.get(SCREENSHOTS_ENV)
    shots_dir = Path(folder) if folder else None
    if shots_dir is not None:
        shots_dir.mkdir(parents=True, exist_ok=True)
    chromium.get(live_server.url + "/accounts/login/")  # an origin to clear cookies on
    chromium.delete_all_cookies()
    chromium.get_log("browser")  # drop what earlier tests logged
    yield Browser(
        driver=chromium,
        base_url=live_server.url,
        test_name=_slug(request.node.name),
        shots_dir=shots_dir,
    )
    chromium.delete_all_cookies()
