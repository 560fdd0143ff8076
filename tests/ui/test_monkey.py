"""Monkey test: Pilot drives the app on a 100k-spec corpus with 10,000 random keys from a
fixed seed. No exception may escape, the app must still be running, and afterwards it must
still answer a search correctly (checked against counts read from the corpus files with
plain json, not through cachetui).

The corpus is generated once per session by benchmarks/make_corpus.py (the corpus_100k fixture,
tests/conftest.py).
"""

from __future__ import annotations

import json
import random
import time
from collections import Counter
from pathlib import Path

from helpers import CORPUS_PACKAGES, CORPUS_SPECS, loaded_at, settle, status, type_key
from textual.widgets import Input

from cachetui.service import IndexService
from cachetui.tui.app import CacheTUI
from cachetui.tui.screens.hash_lookup import HashLookupScreen
from cachetui.tui.screens.main import MainScreen
from cachetui.tui.widgets.candidate_list import CandidateList
from cachetui.tui.widgets.facet_sidebar import FacetSidebar
from cachetui.tui.widgets.package_list import PackageList
from cachetui.tui.widgets.spec_list import SpecList

SPECS, PACKAGES = CORPUS_SPECS, CORPUS_PACKAGES
SEED = 6
KEYS = 10_000
PAUSE_EVERY = 50
SIZE = (120, 40)

# What a user presses, weighted: query text (letters, digits, the spec syntax's punctuation)
# and the app's keys. `q` quits outside a text box: pressed only while one has the focus.
LETTERS = list("abcdefghijklmnoprstuvwxyz") + ["q"]
DIGITS = list("0123456789")
PUNCTUATION = list("@%+~=/^:,.-_*'\"") + ["space"]
NAVIGATION = [
    "tab",
    "shift+tab",
    "up",
    "down",
    "left",
    "right",
    "pageup",
    "pagedown",
    "home",
    "end",
    "enter",
    "escape",
    "backspace",
    "delete",
    "ctrl+b",
    "ctrl+f",
]
APP_KEYS = [
    "ctrl+g",
    "question_mark",
    "f1",
    "p",
    "j",
    "k",
    "g",
    "G",
    "space",
    "slash",
    "enter",
    "escape",
]
KEY_CHOICES = LETTERS + DIGITS + PUNCTUATION + NAVIGATION + APP_KEYS
WEIGHTS = (
    [4] * len(LETTERS)
    + [2] * len(DIGITS)
    + [3] * len(PUNCTUATION)
    + [6] * len(NAVIGATION)
    + [6] * len(APP_KEYS)
)
QUITS = {"q", "ctrl+q", "ctrl+c"}
assert QUITS & set(KEY_CHOICES) == {"q"}


def spec_details(summary: Path) -> list[dict]:
    """A summary's spec_details, read with plain json (independently of cachetui)."""
    for line in summary.read_text(encoding="utf-8").splitlines():
        if line.startswith("spec_details: "):
            return json.loads(line[len("spec_details: ") :])
    raise AssertionError(f"{summary}: no spec_details line")


def keys_for(rng: random.Random, count: int) -> list[str]:
    return rng.choices(KEY_CHOICES, WEIGHTS, k=count)


async def wait_until(pilot, condition, timeout: float = 60.0, what: str = "") -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        await pilot.pause(0.05)


def alive(app, history: list[str] = ()) -> None:
    """The app has not crashed or quit; else say which keys led there (the last 40 sent)."""
    recent = " ".join(history[-40:])
    assert app._exception is None, f"{app._exception!r} after keys: {recent}"
    assert app.return_code is None and app.is_running, (
        f"the app exited (return code {app.return_code}) after keys: {recent}"
    )


async def test_ten_thousand_random_keys_then_a_correct_search(
    corpus_100k: Path, tmp_path: Path, monkeypatch
) -> None:
    monkeypatch.chdir(
        tmp_path
    )  # random keys can export (e, a typed name, enter): into the test's own directory
    corpus = corpus_100k
    summaries = sorted(corpus.glob("develop/*/specs.md"))
    assert len(summaries) == PACKAGES
    specs_of = {path.parent.name: spec_details(path) for path in summaries}
    assert sum(map(len, specs_of.values())) == SPECS
    rng = random.Random(SEED)
    # The final search: a package with specs on more than one OS, and the most common one.
    name = rng.choice(
        sorted(n for n, records in specs_of.items() if len({r["os"] for r in records}) > 1)
    )
    os_name, os_count = Counter(r["os"] for r in specs_of[name]).most_common(1)[0]
    keys = keys_for(rng, KEYS)

    app = CacheTUI(service=IndexService([str(corpus)], cache_dir=tmp_path / "cache"))
    started = time.monotonic()
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(
            pilot,
            lambda: isinstance(app.screen, MainScreen) and app.screen.result is not None,
            120,
            "the load",
        )
        await settle(app, pilot)
        assert status(app).startswith(
            f"{PACKAGES} of {PACKAGES} packages · {SPECS} of {SPECS} specs"
        )
        loaded = time.monotonic()

        pressed: Counter[str] = Counter()
        history: list[str] = []
        for n, key in enumerate(keys, start=1):
            if key in QUITS:
                await pilot.pause()  # every key before it handled: the focus is settled
                if not isinstance(app.focused, Input):
                    key = "j"  # would quit: another key instead
            pressed[key] += 1
            history.append(key)
            await type_key(app, key)
            if app._exception is not None:
                break  # (alive says which keys led there)
            if n % PAUSE_EVERY == 0:
                await pilot.pause()
                alive(app, history)
        alive(app, history)
        await settle(app, pilot)
        alive(app, history)
        typed = time.monotonic()

        # Back to the main screen, no facet on, an empty search box.
        for _ in range(5):
            if isinstance(app.screen, MainScreen):
                break
            await pilot.press("escape")
            await pilot.pause()
        screen = app.screen
        assert isinstance(screen, MainScreen), app.screen_stack
        sidebar = screen.query_one(FacetSidebar)
        screen.filters_shown = True  # (`f` may have folded them away)
        await pilot.pause()
        for facet, values in screen.filter.selections:
            for value in sorted(values):
                if (facet, value) not in sidebar.lines:  # its section is folded: unfold it
                    sidebar.focus()
                    sidebar.cursor = sidebar.lines.index((facet, None))
                    await pilot.press("enter")
                sidebar.focus()
                sidebar.cursor = sidebar.lines.index((facet, value))
                await pilot.press("space")
                await settle(app, pilot)
        assert screen.filter.selections == ()
        search = screen.query_one("#search", Input)
        await pilot.press("slash")
        search.value = ""
        await settle(app, pilot)
        assert status(app).startswith(
            f"{PACKAGES} of {PACKAGES} packages · {SPECS} of {SPECS} specs"
        ), status(app)

        # A package by name: first in the list, with every spec of it, and every package
        # listed with all its specs (a search by name keeps packages whole).
        await pilot.press(*name)
        await settle(app, pilot)
        packages = screen.query_one(PackageList)
        listed = [app.service.index.packages[p] for p in packages.packages]
        assert listed[0] == name, listed[:5]
        assert packages.counts == [len(specs_of[p]) for p in listed]
        expected = sum(len(specs_of[p]) for p in listed)
        assert status(app).startswith(
            f"{len(listed)} of {PACKAGES} packages · {expected} of {SPECS} specs"
        ), status(app)
        await wait_until(
            pilot,
            lambda: screen.query_one(SpecList).count == len(specs_of[name]),
            10,
            "the spec list",
        )

        # And a constraint: that package's specs on its most common OS.
        await pilot.press("space", *f"os={os_name}")
        await settle(app, pilot)
        listed = [app.service.index.packages[p] for p in packages.packages]
        assert listed[0] == name and packages.counts[0] == os_count, (
            listed[:3],
            packages.counts[:3],
            os_count,
        )
        on_os = {p: sum(r["os"] == os_name for r in specs_of[p]) for p in listed}
        assert packages.counts == [on_os[p] for p in listed] and all(packages.counts)
        assert status(app).startswith(
            f"{len(listed)} of {PACKAGES} packages · {sum(on_os.values())} of {SPECS} specs"
        ), status(app)
        alive(app)
        finished = time.monotonic()
    assert app.return_code in (None, 0)
    timing = (
        f"load {loaded - started:.1f} s, {KEYS:,} keys {typed - loaded:.1f} s, final search "
        f"{finished - typed:.1f} s"
    )
    print(f"\nmonkey: {timing}; keys pressed: {sum(pressed.values()):,} ({len(pressed)} distinct)")


async def test_a_choice_that_arrives_after_the_candidates_changed_is_not_a_crash() -> None:
    """What the monkey found (seed 6, about key 111: `ctrl+g p space 4 tab enter G …`): keys
    that arrive together reach the hash lookup's list and its prefix box before the screen
    handles the first, so the list's Selected(index) can arrive after typing emptied the list.
    Here the same order, made deterministic: enter on the list, then the list changes."""
    app = CacheTUI()  # the bundled sample data
    async with loaded_at(app, SIZE) as pilot:
        await pilot.press("ctrl+g", "a")
        lookup = app.screen
        assert isinstance(lookup, HashLookupScreen)
        candidates = lookup.query_one(CandidateList)
        assert candidates.count > 1
        candidates.action_select()  # enter on the list: Selected(0) is on its way to the screen
        candidates.show([], "")  # what a prefix that matches nothing does, handled first
        await pilot.pause()
        alive(app)
