"""End to end: the installed `cachetui serve` on a free loopback port, driven by headless
Chromium (tests/browser.py): the tokened URL opens the app, search and filters work, URLs
without the token get 403 and start nothing, the session limit holds, a closed tab ends its
app, Ctrl+C ends them all, and hostile package data shows as text.

Screenshots are saved in $CACHETUI_ARTIFACTS, else build/e2e. The time from navigation to
the loaded counts is printed (pytest -s shows it); benchmarks/serve_tab.py measures it.
"""

from __future__ import annotations

import asyncio
import signal
import time
import urllib.error
import urllib.request
from pathlib import Path

import aiohttp
import pytest
from browser import Browser, Served
from helpers import SAMPLE, fake_hash, record, write_summary
from selenium.webdriver.common.keys import Keys

pytestmark = pytest.mark.e2e


@pytest.fixture
def browser():
    opened = Browser()
    yield opened
    opened.close()


@pytest.fixture
def serve(tmp_path: Path):
    """Start `cachetui serve ARGS`; every server started is stopped after the test."""
    started: list[Served] = []

    def start(*args: str) -> Served:
        served = Served(*args, cwd=tmp_path)
        started.append(served)
        return served

    yield start
    for served in started:
        served.kill()


def http_status(url: str) -> tuple[int, str]:
    try:
        with urllib.request.urlopen(url, timeout=10) as response:
            return response.status, response.read().decode()
    except urllib.error.HTTPError as error:
        return error.code, error.read().decode()


def test_a_tab_opens_the_app_filters_and_searches(serve, browser: Browser) -> None:
    served = serve()  # the bundled sample data
    banner = served.banner()
    assert served.url.startswith("http://127.0.0.1:")
    port = served.base.rsplit(":", 1)[1]
    assert f"ssh -N -L {port}:127.0.0.1:{port} " in banner
    assert "At most 4 tabs at once" in banner

    browser.open(served.url)
    seconds = browser.wait_for_counts()
    print(f"tab opened with data in {seconds:.2f} s")
    assert browser.status_line().startswith(SAMPLE.status())
    browser.wait_for_text("Specs of py-ml-dtypes")  # the spec list may follow by a frame
    browser.screenshot("serve-opened")

    # The first stack, data-vis-sdk, holds py-mpi4py only (as in test_e2e_tmux.py).
    browser.shift_tab()  # from the package list, past the search box, to the filters
    browser.shift_tab()
    browser.keys(Keys.DOWN, " ")
    in_stack = sum("data-vis-sdk" in r["stacks"] for r in SAMPLE.records)
    browser.wait_for_status(f"1 of 3 packages · {in_stack} of {SAMPLE.specs} specs")
    assert "[x] data-vis-sdk" in browser.screen()

    browser.keys("x", "/", *"safet")  # filters cleared, then a search
    specs = SAMPLE.specs_of["py-safetensors"]
    browser.wait_for_status(f"1 of 3 packages · {specs} of {SAMPLE.specs} specs")
    assert "py-safetensors" in browser.screen() and "py-mpi4py" not in browser.screen()
    print("screenshot:", browser.screenshot("serve-searched"))
    assert "Traceback" not in browser.screen()


def test_only_urls_with_the_token_open_anything(serve, browser: Browser) -> None:
    served = serve()
    spare = served.wait_for_apps(1)  # the app started ahead, for the first tab
    wrong = served.token[:-1] + ("A" if served.token[-1] != "A" else "B")
    for url in (
        f"{served.base}/",
        f"{served.base}/?token=",
        f"{served.base}/?token={wrong}",
        f"{served.base}/ws/{wrong}",
        f"{served.base}/static/{wrong}/js/textual.js",
        f"{served.base}/favicon.ico",
        f"{served.base}/{served.token}",
    ):
        status, text = http_status(url)
        assert status == 403, url
        assert "needs the token" in text
        assert served.token not in text

    async def websocket(token: str) -> int:
        async with aiohttp.ClientSession() as session:
            try:
                async with session.ws_connect(f"{served.base}/ws/{token}"):
                    return 101
            except aiohttp.WSServerHandshakeError as error:
                return error.status

    assert asyncio.run(websocket(wrong)) == 403
    browser.open(f"{served.base}/?token={wrong}")
    assert "403 Forbidden" in browser.page_text()
    time.sleep(0.5)
    assert served.apps() == spare  # none of it started an app

    status, _ = http_status(f"{served.base}/static/{served.token}/js/textual.js")
    assert status == 200  # the page's script, under the token
    # Through a tunnel the browser's host is not the server's: the page's websocket follows
    # the address the browser used (here localhost, not the 127.0.0.1 printed).
    browser.open(served.url.replace("127.0.0.1", "localhost"))
    browser.wait_for_counts()


def test_the_session_limit_holds_and_a_closed_tab_ends_its_app(serve, browser: Browser) -> None:
    served = serve("--sessions", "2")
    first_app = served.wait_for_apps(1)  # started ahead: the first tab takes it
    browser.open(served.url)
    browser.wait_for_counts()
    first = browser.driver.current_window_handle
    browser.open(served.url, new_tab=True)
    browser.wait_for_counts()
    served.wait_for_apps(2)  # one a tab, no spare beyond the limit

    browser.open(served.url, new_tab=True)  # a third tab, at the limit
    text = browser.page_text()
    assert "the session limit is reached" in text and "at most 2 sessions" in text
    assert http_status(served.url)[0] == 503
    browser.screenshot("serve-limit")
    time.sleep(0.5)
    assert len(served.apps()) == 2  # and no third app

    third = browser.driver.current_window_handle
    browser.driver.switch_to.window(first)
    browser.driver.close()  # a tab closed: its app ends, its slot is free
    served.wait_for_gone(first_app)
    browser.driver.switch_to.window(third)
    browser.driver.refresh()
    browser.wait_for_counts()
    served.wait_for_apps(2)


@pytest.mark.parametrize("stop", [signal.SIGINT, signal.SIGTERM], ids=["ctrl-c", "sigterm"])
def test_ctrl_c_ends_the_server_and_every_app(serve, browser: Browser, stop: int) -> None:
    served = serve()
    browser.open(served.url)
    browser.wait_for_counts()
    browser.open(served.url, new_tab=True)
    browser.wait_for_counts()
    served.wait_for_apps(3)  # the two tabs', and the spare for the next tab

    assert served.stop(stop) == 0
    assert served.apps() == []  # no app, no process an app started, is left
    assert "stopping the server and its 3 apps" in served.stderr()
    assert "Traceback" not in served.stderr()
    browser.wait_for_page_text("Session ended.")  # the page says so


def test_hostile_names_show_as_text_in_the_page(serve, browser: Browser, tmp_path: Path) -> None:
    name = "<script>alert(1)</script>"
    stack = "<img src=x onerror=alert(2)>"
    write_summary(
        tmp_path / "hostile" / "develop" / "evil" / "specs.md",
        name,
        [
            record(
                fake_hash(1, "aa"),
                variants=("+x&amp;y", "v=\x1b[31mred"),
                stacks=("root", stack),
            )
        ],
    )
    served = serve(str(tmp_path / "hostile"))
    browser.open(served.url)
    browser.wait_for_counts()
    screen = browser.wait_for_text(stack)  # the spec list, at the page's size
    assert name in screen  # the package list and the detail
    assert "x&amp;y" in screen  # the detail pane, its variants
    assert "v=\\x1b[31mred" in screen  # the escape shown, not obeyed
    browser.screenshot("serve-hostile")
    scripts = browser.driver.execute_script(
        "return [...document.scripts].map(s => s.src || 'inline')"
    )
    assert len(scripts) == 2 and scripts[0].endswith("/js/textual.js")  # the page's own
    assert browser.driver.execute_script("return document.querySelectorAll('img').length") == 0
    assert browser.driver.execute_script("return window.__alerts") == []
    assert name not in browser.driver.page_source  # the data is never in the page's HTML
