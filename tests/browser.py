"""`cachetui serve` and a real browser, for tests/e2e/test_serve.py and
benchmarks/serve_tab.py: `from browser import Served, Browser`.

- Served: the installed `cachetui serve` on a free loopback port, its printed URL and token,
  the app processes it started (found by a mark in their environment, so grandchildren and
  processes left behind after the server count too), stopped with SIGINT.
- Browser: Debian's headless Chromium driven by Selenium through Debian's chromedriver (no
  browser is downloaded), with the flags this machine's closed network needs. The page's
  terminal (xterm.js) paints on a canvas, so the screen is read from xterm's own buffer: a
  script given to Chromium before any page script runs catches the Terminal object
  textual.js makes (it is kept in a closure, out of reach otherwise). The hook is the test's;
  the page served has none.
"""

from __future__ import annotations

import os
import queue
import re
import shutil
import signal
import subprocess
import tempfile
import threading
import time
import uuid
from pathlib import Path

from helpers import INSTALLED, REPO

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
CHROMEDRIVER = shutil.which("chromedriver") or "/usr/bin/chromedriver"
# Without these, Chromium's own connections (updates, sync, QUIC probes) are refused by this
# machine's closed network and it stalls; a fresh profile each time.
CHROMIUM_FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
)
# Where the screenshots go ($CACHETUI_ARTIFACTS, else build/e2e, which git ignores).
ARTIFACTS = Path(os.environ.get("CACHETUI_ARTIFACTS") or REPO / "build" / "e2e")

# Run before the page's scripts: textual.js's `new Terminal(...)` sets `_addonManager` on
# the new terminal, which an accessor on Object.prototype sees first; alert() is recorded;
# and the time from the navigation's start to the first frame with counts on the status line
# in its place (the next to last line: the app painted at the page's size), watched from
# inside the page every 5 ms (Selenium's round trips would add their own time).
_HOOK = """
window.__countsAt = null;
const watchCounts = () => {
  const term = window.__terminals[0];
  if (term) {  // the status line in its place, so painted at the page's size
    const line = term.buffer.active.getLine(term.buffer.active.viewportY + term.rows - 2);
    if (line && /^ ?[1-9][0-9]* of [0-9]+ packages · /.test(line.translateToString(true))) {
      window.__countsAt = performance.now();
      return;
    }
  }
  setTimeout(watchCounts, 5);
};
setTimeout(watchCounts, 5);
window.__terminals = [];
window.__alerts = [];
window.alert = (text) => { window.__alerts.push(String(text)); };
Object.defineProperty(Object.prototype, "_addonManager", {
  configurable: true,
  set(value) {
    Object.defineProperty(this, "_addonManager",
      {value, writable: true, configurable: true, enumerable: true});
    if (typeof this.loadAddon === "function") window.__terminals.push(this);
  },
});
"""
# The terminal's visible lines, as xterm.js holds them (what it paints).
_SCREEN = """
const term = window.__terminals[0];
if (!term) return null;
const buffer = term.buffer.active, lines = [];
for (let y = 0; y < term.rows; y++) {
  const line = buffer.getLine(buffer.viewportY + y);
  lines.push(line ? line.translateToString(true) : "");
}
return lines.join("\\n");
"""
STATUS = re.compile(r"(\d+) of (\d+) packages · (\d+) of (\d+) specs")


class Served:
    """`cachetui serve ARGS --port 0`, started; its URL once it printed it."""

    def __init__(self, *args: str, cwd: Path, env: dict[str, str] | None = None) -> None:
        assert INSTALLED.exists(), f"cachetui is not installed beside {INSTALLED.parent}"
        self.mark = f"cachetui-serve-test-{uuid.uuid4().hex}"
        self.stderr_path = cwd / f"serve-stderr-{self.mark[-8:]}.txt"
        self._stderr = self.stderr_path.open("w")
        self.process = subprocess.Popen(
            [str(INSTALLED), "serve", "--port", "0", *args],
            cwd=cwd,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=self._stderr,
            text=True,
            env={**os.environ, "CACHETUI_TEST_MARK": self.mark, **(env or {})},
        )
        self.lines: queue.Queue[str] = queue.Queue()
        self.stdout: list[str] = []
        threading.Thread(target=self._read, daemon=True).start()
        self.url = self._wait_for_url()
        self.base, self.token = self.url.split("/?token=")

    def _read(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            self.lines.put(line)

    def _wait_for_url(self, timeout: float = 30.0) -> str:
        """The URL, once the whole banner is printed (its last line says how to stop)."""
        deadline, url = time.monotonic() + timeout, None
        while time.monotonic() < deadline:
            try:
                line = self.lines.get(timeout=0.1)
            except queue.Empty:
                if self.process.poll() is not None:
                    break
                continue
            self.stdout.append(line)
            found = re.search(r"http://127\.0\.0\.1:\d+/\?token=\S+", line)
            url = url or (found.group() if found else None)
            if url and "Ctrl+C" in line:
                return url
        raise AssertionError(f"cachetui serve printed no URL; stderr:\n{self.stderr()}")

    def banner(self) -> str:
        """All it printed on stdout so far."""
        while not self.lines.empty():
            self.stdout.append(self.lines.get())
        return "".join(self.stdout)

    def stderr(self) -> str:
        return self.stderr_path.read_text()

    def apps(self) -> list[int]:
        """The live processes it started (the apps and anything they started): every process
        but the server holding its mark in its environment."""
        found = []
        for entry in Path("/proc").iterdir():
            if not entry.name.isdigit() or int(entry.name) == self.process.pid:
                continue
            try:
                environ = (entry / "environ").read_bytes()
                state = (entry / "stat").read_text().rsplit(")", 1)[1].split()[0]
            except OSError:  # gone, or not ours to read
                continue
            if f"CACHETUI_TEST_MARK={self.mark}".encode() in environ.split(b"\0") and state != "Z":
                found.append(int(entry.name))
        return found

    def wait_for_apps(self, count: int, timeout: float = 15.0) -> list[int]:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            apps = self.apps()
            if len(apps) == count:
                return apps
            time.sleep(0.1)
        raise AssertionError(f"{len(self.apps())} app processes live, not {count}")

    def wait_for_gone(self, pids: list[int], timeout: float = 15.0) -> None:
        deadline = time.monotonic() + timeout
        while set(pids) & set(self.apps()):
            assert time.monotonic() < deadline, f"still running: {set(pids) & set(self.apps())}"
            time.sleep(0.1)

    def stop(self, signal_number: int = signal.SIGINT, timeout: float = 15.0) -> int:
        """SIGINT, as Ctrl+C at its terminal (or another signal); its exit status."""
        if self.process.poll() is None:
            self.process.send_signal(signal_number)
        try:
            return self.process.wait(timeout)
        finally:
            self._stderr.close()

    def kill(self) -> None:
        """After a test, whatever happened: nothing of it left running."""
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait()
        for pid in self.apps():
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
        if not self._stderr.closed:
            self._stderr.close()


class Browser:
    """Headless Chromium through Selenium; tabs opened with `open`."""

    def __init__(self, width: int = 1400, height: int = 900) -> None:
        from selenium import webdriver
        from selenium.webdriver.chrome.service import Service

        for program in (CHROMIUM, CHROMEDRIVER):
            assert Path(program).exists(), (
                f"{program} is missing: apt-get install chromium chromium-driver (.ci/run does)"
            )
        self.profile = tempfile.mkdtemp(prefix="cachetui-chromium-")
        options = webdriver.ChromeOptions()
        options.binary_location = CHROMIUM
        for flag in (*CHROMIUM_FLAGS, f"--user-data-dir={self.profile}"):
            options.add_argument(flag)
        options.add_argument(f"--window-size={width},{height}")
        self.driver = webdriver.Chrome(service=Service(CHROMEDRIVER), options=options)
        self._hook()

    def _hook(self) -> None:
        # Per tab: a new tab is a new target that has not had it.
        self.driver.execute_cdp_cmd("Page.addScriptToEvaluateOnNewDocument", {"source": _HOOK})

    def open(self, url: str, new_tab: bool = False) -> None:
        if new_tab:
            self.driver.switch_to.new_window("tab")
            self._hook()
        self.driver.get(url)

    def screen(self) -> str:
        """The terminal's lines ("" before it exists)."""
        return self.driver.execute_script(_SCREEN) or ""

    def status_line(self) -> str:
        found = [line.strip() for line in self.screen().splitlines() if STATUS.search(line)]
        return found[-1] if found else ""

    def wait_for_status(self, prefix: str | re.Pattern, timeout: float = 20.0) -> str:
        """Wait until the status line starts with `prefix` (or matches a pattern)."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            line = self.status_line()
            if line and (
                line.startswith(prefix) if isinstance(prefix, str) else prefix.match(line)
            ):
                return line
            time.sleep(0.05)
        raise AssertionError(f"the status line never became {prefix!r}:\n{self.screen()}")

    def wait_for_counts(self, timeout: float = 20.0) -> float:
        """Wait until the status line shows the loaded counts (not `0 of 0`); the seconds from
        the start of the page's navigation to the first frame that showed them."""
        self.wait_for_status(re.compile(r"[1-9]\d* of \d+ packages"), timeout)
        deadline = time.monotonic() + timeout
        while (at := self.driver.execute_script("return window.__countsAt")) is None:
            assert time.monotonic() < deadline, "the page's own watch never saw the counts"
            time.sleep(0.02)
        return at / 1000  # performance.now() counts from the navigation's start

    def wait_for_text(self, text: str, timeout: float = 20.0) -> str:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            screen = self.screen()
            if text in screen:
                return screen
            time.sleep(0.05)
        raise AssertionError(f"{text!r} never showed:\n{self.screen()}")

    def keys(self, *keys: str) -> None:
        """Each key (a character, or a Selenium Keys value) typed into the terminal on its own,
        as a person types: the app sees one key at a time."""
        from selenium.webdriver.common.action_chains import ActionChains

        self.driver.execute_script("window.__terminals[0].focus()")
        for key in keys:
            ActionChains(self.driver).send_keys(key).perform()
            time.sleep(0.08)

    def shift_tab(self) -> None:
        from selenium.webdriver.common.action_chains import ActionChains
        from selenium.webdriver.common.keys import Keys

        self.driver.execute_script("window.__terminals[0].focus()")
        ActionChains(self.driver).key_down(Keys.SHIFT).send_keys(Keys.TAB).key_up(
            Keys.SHIFT
        ).perform()
        time.sleep(0.08)

    def page_text(self) -> str:
        return self.driver.execute_script("return document.body.innerText")

    def wait_for_page_text(self, text: str, timeout: float = 10.0) -> str:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            page = self.page_text()
            if text in page:
                return page
            time.sleep(0.1)
        raise AssertionError(f"{text!r} never showed in the page:\n{self.page_text()}")

    def screenshot(self, name: str) -> Path:
        ARTIFACTS.mkdir(parents=True, exist_ok=True)
        path = ARTIFACTS / f"{name}.png"
        self.driver.save_screenshot(str(path))
        return path

    def close(self) -> None:
        try:
            self.driver.quit()
        finally:
            shutil.rmtree(self.profile, ignore_errors=True)
