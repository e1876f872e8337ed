"""A real headless Chromium (Debian's `chromium` and `chromium-driver`, driven by selenium 4)
against pytest-django's live server, which serves /static/ through staticfiles' finders.

One browser serves the whole test session; each test starts with no cookies, on a desktop
window (1366 px wide). With MEMORYHUB_SCREENSHOTS set to a folder, every page a test visits is
saved there as two PNGs, one at 1366 px and one on a 390 px phone (.ci/run sets it per backend
run). A missing browser fails the tests: CI installs it.
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
DESKTOP = 1366  # CSS px: a common laptop
PHONE = 390  # CSS px: a common phone (844 px tall)
PHONE_HEIGHT = 844
WIDTHS = (DESKTOP, PHONE)  # every screenshot is taken at each


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
        f"--window-size={DESKTOP},900",
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


# Browser.overflow(): the page's widths and, when it is wider than the layout viewport, the
# three widest culprits, each named by tag, id and classes with the start of its text: an
# element whose box reaches past the viewport's right (or left) edge, or one whose own text
# does (its box fits; no child element sticks out). One inside an ancestor that scrolls or
# clips sideways, and fits, is not counted: that box scrolls, the page does not.
OVERFLOW_JS = """
const root = document.documentElement, body = document.body, viewport = root.clientWidth;
const widths = {viewport, document: root.scrollWidth, body: body.scrollWidth,
                innerWidth: window.innerWidth};
if (widths.document <= viewport && widths.body <= viewport) return null;
const inside = (left, right) => left + scrollX >= -0.5 && right + scrollX <= viewport + 0.5;
const scrolls = (el) => {
  for (let a = el.parentElement; a && a !== body; a = a.parentElement) {
    const r = a.getBoundingClientRect();
    if (getComputedStyle(a).overflowX !== "visible" && inside(r.left, r.right)) return true;
  }
  return false;
};
const name = (el) => el.tagName.toLowerCase() + (el.id ? "#" + el.id : "")
  + [...el.classList].map((c) => "." + c).join("");
const all = [...body.querySelectorAll("*")], culprits = [], above = new Set();
for (let i = all.length - 1; i >= 0; i--) {  // children before their parents
  const el = all[i], r = el.getBoundingClientRect();
  if (r.width === 0 && r.height === 0) continue;
  const spills = getComputedStyle(el).overflowX === "visible";  // its text may stick out
  const width = spills ? Math.max(r.width, el.scrollWidth) : r.width;
  const box = !inside(r.left, r.right);
  const text = !box && spills && !above.has(el) && !inside(r.left, r.left + width);
  if (!(box || text) || scrolls(el)) continue;
  culprits.push({element: name(el), width: Math.round(width),
                 right: Math.round(r.left + width + scrollX),
                 text: (el.innerText || el.textContent || "").trim().slice(0, 60)});
  for (let a = el.parentElement; a && !above.has(a); a = a.parentElement) above.add(a);
}
culprits.sort((a, b) => b.width - a.width);
return {...widths, widest: culprits.slice(0, 3)};
"""


# The text of each line an element's text is laid out on (by the top of each character's
# box): how a person sees it wrap.
LINES_JS = """
const el = arguments[0], range = document.createRange(), lines = [];
let top = null;
const walker = document.createTreeWalker(el, NodeFilter.SHOW_TEXT);
for (let node = walker.nextNode(); node; node = walker.nextNode()) {
  for (let i = 0; i < node.length; i++) {
    range.setStart(node, i); range.setEnd(node, i + 1);
    const box = range.getClientRects()[0];
    if (!box) continue;
    if (top === null || Math.abs(box.top - top) > 2) { lines.push(""); top = box.top; }
    lines[lines.length - 1] += node.data[i];
  }
}
return lines;
"""


@dataclass
class Browser:
    """The browser pointed at the live server, with the waits and checks every flow needs."""

    driver: WebDriver
    base_url: str
    test_name: str
    shots_dir: Path | None
    shots: list[Path] = field(default_factory=list)
    shot_count: int = 0
    width: int = DESKTOP

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

    def lines(self, element: WebElement) -> list[str]:
        """`element`'s text, line by line as it is laid out (LINES_JS)."""
        return self.driver.execute_script(LINES_JS, element)

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

    # -- width --------------------------------------------------------------------------------

    def set_width(self, width: int) -> None:
        """Lay the page out `width` CSS px wide: DESKTOP is the window itself; PHONE emulates a
        phone (Chromium's device metrics with `mobile`: the viewport meta tag applies and
        scrollbars overlay the page, as on a phone)."""
        if width == PHONE:
            self.driver.execute_cdp_cmd(
                "Emulation.setDeviceMetricsOverride",
                {"width": PHONE, "height": PHONE_HEIGHT, "deviceScaleFactor": 1, "mobile": True},
            )
        elif width == DESKTOP:
            self.driver.execute_cdp_cmd("Emulation.clearDeviceMetricsOverride", {})
        else:
            raise ValueError(f"width {width}: one of {WIDTHS}")
        self.width = width
        # The layout viewport: on the phone document.documentElement.clientWidth is 390 even
        # when the page is wider (window.innerWidth then grows with it); on the desktop window
        # the vertical scrollbar takes its share, so ask the window.
        probe = (
            "return document.documentElement.clientWidth"
            if width == PHONE
            else "return window.innerWidth"
        )
        WebDriverWait(self.driver, WAIT_SECONDS).until(lambda d: d.execute_script(probe) == width)

    def overflow(self) -> dict | None:
        """None when nothing sticks out sideways: the document and the body are at most the
        layout viewport wide. Otherwise the widths and the widest elements sticking out, the
        ones inside a box that scrolls or clips on its own (and fits) left out."""
        return self.driver.execute_script(OVERFLOW_JS)

    # -- screenshots --------------------------------------------------------------------------

    def show(self, element: WebElement, label: str) -> None:
        """Scroll `element` to the middle of the window and screenshot the page there."""
        self.driver.execute_script("arguments[0].scrollIntoView({block: 'center'})", element)
        self.screenshot(label, element=element)

    def screenshot(self, label: str = "", *, element: WebElement | None = None) -> list[Path]:
        """Save the page at each of WIDTHS as <test>-<nn>-<path>-<width>.png when
        MEMORYHUB_SCREENSHOTS is set (`element`, if given, scrolled to the middle each time),
        then lay it out at the width it had."""
        if self.shots_dir is None:
            return []
        self.shot_count += 1
        stem = f"{self.test_name}-{self.shot_count:02d}-{_slug(label or self.path)}"
        was = self.width
        saved = []
        for width in WIDTHS:
            self.set_width(width)
            if element is not None:
                self.driver.execute_script(
                    "arguments[0].scrollIntoView({block: 'center'})", element
                )
            target = self.shots_dir / f"{stem}-{width}.png"
            assert self.driver.save_screenshot(str(target)), f"could not save {target}"
            saved.append(target)
        self.set_width(was)
        if element is not None:
            self.driver.execute_script("arguments[0].scrollIntoView({block: 'center'})", element)
        self.shots += saved
        return saved


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
    browser = Browser(
        driver=chromium,
        base_url=live_server.url,
        test_name=_slug(request.node.name),
        shots_dir=shots_dir,
    )
    browser.set_width(DESKTOP)
    yield browser
    browser.set_width(DESKTOP)
    chromium.delete_all_cookies()
