"""Helpers the tests share, in one module: `from helpers import fake_hash, settle, ...`.

It is importable because tests/ is on sys.path: pytest's default ("prepend") import mode
puts the directory of tests/conftest.py there (tests/ has no __init__.py), and
`pythonpath = ["tests"]` in the pytest config says so explicitly. (So test files need
names of their own across unit/, ui/ and e2e/.) It imports no Textual at module level:
the unit tests stay free of it.

  - where things are: the repository, the sample data, tests/fixtures, ../shared
  - the sample data read with plain json (SAMPLE): the expected figures
  - synthetic summaries: fake_hash, record, write_summary
  - what cachetui writes: SPEC_LINE
  - the index: bits_of
  - colours: in_256_colours, contrast
  - driving the app with Pilot: loaded_at, settle, status, the screen as text (screen_text,
    screen_lines, screen_strips), type_key
  - a real terminal (tmux) for the end-to-end tests: Terminal, pane_title, shows

Fixtures (private_cache, synthetic, corpus_100k, ...) are in tests/conftest.py.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import time
import uuid
from contextlib import asynccontextmanager
from pathlib import Path

# -- where things are ---------------------------------------------------------------------------

TESTS = Path(__file__).resolve().parent
REPO = TESTS.parent
SAMPLE_DATA = REPO / "sample_data"
SAMPLE_FILES = sorted(SAMPLE_DATA.rglob("specs.md"))
FIXTURES = TESTS / "fixtures"
BUILDCACHE = FIXTURES / "buildcache"  # small Spack mirrors and indexes, each with its expected.json
BAD_INPUTS = FIXTURES / "bad_inputs"  # one file per kind of damage ...
BAD_INPUTS_EXPECTED = FIXTURES / "bad_inputs.expected.json"  # ... and the message each gets
# Real data beside the repository (../shared): seeds from cache.spack.io, and every file
# Spack writes with what Spack answered about it. Tests that need it skip without it.
SHARED = REPO.parent / "shared"
SHARED_SEEDS = SHARED / "seeds"
SPACK_REAL = SHARED / "real" / "spack"

# The generated corpus of tests/conftest.py's corpus_100k fixture (benchmarks/make_corpus.py).
CORPUS_SPECS, CORPUS_PACKAGES = 100_000, 1_000


# -- the sample data, read with plain json --------------------------------------------------------


def raw_front_matter(path: Path) -> dict:
    """A summary's meta and spec_details read with plain json, independently of cachetui."""
    out = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        for key in ("meta", "spec_details"):
            if line.startswith(key + ": "):
                out[key] = json.loads(line[len(key) + 2 :])
    return out


class SampleTruth:
    """Expected figures for the bundled sample data, taken from the files themselves."""

    def __init__(self) -> None:
        raw = {p.parent.name: raw_front_matter(p) for p in SAMPLE_FILES}
        self.packages = sorted(raw)
        self.specs_of = {name: len(r["spec_details"]) for name, r in raw.items()}
        assert self.specs_of == {name: r["meta"]["num_specs"] for name, r in raw.items()}
        self.specs = sum(self.specs_of.values())
        self.records = [rec for r in raw.values() for rec in r["spec_details"]]
        self.hashes = [rec["hash"] for rec in self.records]
        self.package_of = {
            rec["hash"]: name for name, r in raw.items() for rec in r["spec_details"]
        }

    def count(self, **where: str) -> int:
        return sum(all(rec[k] == v for k, v in where.items()) for rec in self.records)

    def status(self) -> str:
        return (
            f"{len(self.packages)} of {len(self.packages)} packages"
            f" · {self.specs} of {self.specs} specs"
        )


SAMPLE = SampleTruth()


# -- synthetic summaries ------------------------------------------------------------------------

_B32 = "abcdefghijklmnopqrstuvwxyz234567"


def fake_hash(n: int, prefix: str = "") -> str:
    """A valid 32-char base32 hash, distinct for each n (and starting with `prefix`)."""
    digits = []
    for _ in range(32 - len(prefix)):
        digits.append(_B32[n % 32])
        n //= 32
    return prefix + "".join(reversed(digits))


def record(
    digest: str,
    version: str = "1.0",
    compiler: str = "gcc@13.2.0",
    os: str = "ubuntu24.04",
    target: str = "x86_64_v3",
    platform: str = "linux",
    stacks=("root",),
    variants=("build_system=generic",),
    **extra,
) -> dict:
    """One spec_details record of a cache.spack.io summary."""
    return {
        "hash": digest,
        "versions": [version],
        "compiler": compiler,
        "os": os,
        "platform": platform,
        "target": target,
        "stacks": list(stacks),
        "variants": list(variants),
        "size": "-",
        **extra,
    }


def write_summary(
    path: Path, package: str, records: list[dict], tag: str = "develop", meta: dict | None = None
) -> Path:
    """A cache.spack.io summary (specs.md) of `package` holding `records`."""
    path.parent.mkdir(parents=True, exist_ok=True)
    lines = [
        "---",
        "title: " + json.dumps(package),
        "layout: cache",
        f"categories: [package, {tag}]",
    ]
    if meta is not None:
        lines.append("meta: " + json.dumps(meta))
    lines += ["spec_details: " + json.dumps(records), "---", ""]
    path.write_text("\n".join(lines), encoding="utf-8")
    return path


# -- what cachetui writes ------------------------------------------------------------------------

# A Spack 1.x spec line, as `search --specs` and the app's export write one.
SPEC_LINE = re.compile(
    r"^(?P<package>[^@\s]+)@(?P<version>[^\s+~]+)(?P<variants>.*?)"
    r" arch=(?P<platform>[^-\s]+)-(?P<os>[^-\s]+)-(?P<target>\S+)"
    r" /(?P<hash>[a-z2-7]{32})(?: %(?P<compiler>\S+))?$"
)


# -- the index ----------------------------------------------------------------------------------


def bits_of(index, facet: str, value: str) -> int:
    """The rows (a bitset) having `value` in `facet`."""
    return index.facet_bits[facet][index.facet_values[facet].index(value)]


# -- colours: what a 256-colour terminal shows, and whether it can be read ----------------------


def in_256_colours(color):
    """A Textual Color as a 256-colour terminal shows it (Rich's own downgrade)."""
    from rich.color import Color as RichColor
    from rich.color import ColorSystem
    from textual.color import Color

    true = (
        RichColor.from_rgb(color.r, color.g, color.b)
        .downgrade(ColorSystem.EIGHT_BIT)
        .get_truecolor()
    )
    return Color(true.red, true.green, true.blue)


def contrast(a, b) -> float:
    """WCAG 2 contrast ratio of two colours (4.5 is AA for text)."""

    def luminance(c) -> float:
        def channel(v: int) -> float:
            v = v / 255
            return v / 12.92 if v <= 0.03928 else ((v + 0.055) / 1.055) ** 2.4

        return 0.2126 * channel(c.r) + 0.7152 * channel(c.g) + 0.0722 * channel(c.b)

    high, low = sorted((luminance(a), luminance(b)), reverse=True)
    return (high + 0.05) / (low + 0.05)


# -- driving the app with Pilot (tests/ui) ---------------------------------------------------


@asynccontextmanager
async def loaded_at(app, size: tuple[int, int], **options):
    """Run `app` headless at `size` (columns, lines) and wait for its index to load and show:
    `async with loaded_at(app, (120, 40)) as pilot:`. `options` go to App.run_test."""
    async with app.run_test(size=size, **options) as pilot:
        await settle(app, pilot)
        yield pilot


async def settle(app, pilot) -> None:
    """Let the load and evaluation workers finish and their messages land."""
    for _ in range(3):
        await app.workers.wait_for_complete()
        await pilot.pause()


async def palette(app, pilot, text: str, expect: str) -> list[str]:
    """Open the palette, type `text`, wait for a hit starting with `expect` at the top, choose
    it."""
    await pilot.press("ctrl+p")
    await pilot.press(*text)
    prompts: list[str] = []
    for _ in range(60):
        await pilot.pause(0.05)
        listing = app.screen.query("CommandList")
        if listing:
            options = listing.first()
            prompts = [
                str(options.get_option_at_index(i).prompt).split("\n")[0]
                for i in range(options.option_count)
            ]
            if prompts and prompts[0].startswith(expect):
                break
    assert prompts and prompts[0].startswith(expect), prompts
    await pilot.press("enter")
    await settle(app, pilot)
    return prompts


def status(app) -> str:
    """The status line as the terminal shows it."""
    return str(app.screen.query_one("#status").render())


def screen_strips(app) -> list:
    """The screen as painted: one rich Strip (text with its styles) per terminal line.

    The one place the tests read Textual's private API for the screen. Textual 8 has no
    public way to get the painted screen as text: App.export_screenshot() gives SVG, and a
    widget's render_line() gives that widget alone, before the screen composes the layers
    (borders, overlays, toasts) the terminal shows. The compositor's render_strips() is
    exactly what the terminal gets; a Textual upgrade that changes it breaks only this line.
    """
    return app.screen._compositor.render_strips()


def screen_lines(app, widget=None, content: bool = False) -> list[str]:
    """The painted lines of the screen as text, or of `widget`'s region of it (with
    `content`, of its content region: inside its border and padding)."""
    strips = screen_strips(app)
    if widget is None:
        return [strip.text for strip in strips]
    region = widget.content_region if content else widget.region
    return [strip.crop(region.x, region.right).text for strip in strips[region.y : region.bottom]]


def screen_text(app) -> str:
    """The text of the whole screen as the terminal would show it, a line per terminal line."""
    return "\n".join(screen_lines(app))


def key_event(key: str):
    """The Key event `pilot.press(key)` sends (as textual.app.App._press_keys makes it)."""
    import unicodedata

    from textual import events
    from textual.keys import REPLACED_KEYS, _character_to_key, _get_unicode_name_from_key

    if len(key) == 1 and not key.isalnum():
        key = _character_to_key(key)
    try:
        char = unicodedata.lookup(_get_unicode_name_from_key(REPLACED_KEYS.get(key, key)))
    except KeyError:
        char = key if len(key) == 1 else None
    return events.Key(key, char)


async def type_key(app, key: str) -> None:
    """Send a key the way pilot.press does, through the driver, without its two idle waits
    of at least 20 ms each (10,000 keys would take 13 minutes): keys arrive as from a fast
    typist, and the pauses between bursts let the app catch up."""
    import asyncio

    event = key_event(key)
    event.set_sender(app)
    app._driver.send_message(event)
    await asyncio.sleep(0)


# -- a real terminal: the installed cachetui in tmux (tests/e2e) --------------------------------

TMUX = shutil.which("tmux")
INSTALLED = Path(sys.executable).parent / "cachetui"
WIDE = 120  # from this width on, the filters and the detail pane show from the start


def pane_title(title: str) -> re.Pattern:
    """A pane's border title, in a light border or a heavy one (the focused pane, where colour
    cannot mark it). Not the footer's `f Filters`, nor text inside a pane."""
    return re.compile(rf"[─━] {re.escape(title)} ")


def shows(screen: str, text: str | re.Pattern) -> bool:
    """Whether `screen` has `text` (a plain substring) or a match of the pattern `text`."""
    return bool(text.search(screen)) if isinstance(text, re.Pattern) else text in screen


FILTERS_PANE = pane_title("Filters")  # the filter sidebar


class Terminal:
    """cachetui in a tmux pane on a private server (socket), read off the screen.

    `env`: variables added to the environment cachetui starts in (e.g. PAGER).
    `tmux_options`: server options set before cachetui starts (e.g. set-clipboard=on), from
    a config file of our own, so that the user's ~/.tmux.conf plays no part either.
    """

    def __init__(
        self,
        width: int,
        height: int,
        cwd: Path,
        args: tuple[str, ...] = (),
        env: dict[str, str] | None = None,
        tmux_options: dict[str, str] | None = None,
    ) -> None:
        assert TMUX, "tmux is needed for the end-to-end tests (.ci/run installs it)"
        assert INSTALLED.exists(), (
            f"cachetui is not installed beside {sys.executable}: pip install ."
        )
        self.socket = f"cachetui-test-{uuid.uuid4().hex[:8]}"
        self.width = width
        self.height = height
        # A shell runs cachetui and writes its exit status to a file: tmux 3.3 sometimes
        # leaves an exited pane process unreaped (a zombie) and never records its status.
        self.status_file = cwd / f"exit-status-{self.socket}"
        command = (
            f"{shlex.join([str(INSTALLED), *args])}; echo $? > {shlex.quote(str(self.status_file))}"
        )
        # The server starts with this environment, and the pane inherits it.
        full_env = {**os.environ, "TERM": "xterm-256color", **(env or {})}
        # Options in the config file hold from the server's start: set afterwards, the
        # app could already be running (and writing) before they apply.
        self.tmux_conf = cwd / f"tmux-{self.socket}.conf"
        self.tmux_conf.write_text(
            "".join(
                f"set-option -g {name} {shlex.quote(value)}\n"
                for name, value in (tmux_options or {}).items()
            )
        )
        self._tmux(
            "-f",
            str(self.tmux_conf),
            "new-session",
            "-d",
            "-s",
            "e2e",
            "-x",
            str(width),
            "-y",
            str(height),
            "-c",
            str(cwd),
            command,
            env=full_env,
        )
        self._tmux("set-option", "-t", "e2e", "remain-on-exit", "on")

    def _tmux(self, *args: str, env=None) -> str:
        done = subprocess.run(
            [TMUX, "-L", self.socket, *args], capture_output=True, text=True, env=env, timeout=10
        )
        assert done.returncode == 0, done.stderr
        return done.stdout

    def tmux(self, *args: str) -> subprocess.CompletedProcess:
        """Any tmux command on this terminal's server, unchecked (e.g. show-buffer, which fails
        while there is none)."""
        return subprocess.run(
            [TMUX, "-L", self.socket, *args], capture_output=True, text=True, timeout=10
        )

    def screen(self) -> str:
        return self._tmux("capture-pane", "-p", "-t", "e2e")

    def screen_with_attributes(self) -> str:
        """The screen with its colours and attributes, as SGR escape sequences."""
        return self._tmux("capture-pane", "-e", "-p", "-t", "e2e")

    def status_line(self) -> str:
        """The app's status line (`n of N packages · m of M specs` and what follows)."""
        lines = [
            line
            for line in self.screen().splitlines()
            if " packages · " in line and " specs" in line
        ]
        return lines[-1].strip() if lines else ""

    def wait_for_status(self, text: str, timeout: float = 20.0) -> str:
        """Wait until the status line starts with `text`; the status line."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            line = self.status_line()
            if line.startswith(text):
                return line
            time.sleep(0.1)
        raise AssertionError(
            f"the status line never started with {text!r}; the screen was:\n{self.screen()}"
        )

    def paste_buffer(self) -> str | None:
        """tmux's newest paste buffer (what an OSC 52 copy set, with set-clipboard on); None if
        none."""
        done = self.tmux("show-buffer")
        return done.stdout if done.returncode == 0 else None

    def wait_for_paste_buffer(self, text: str, timeout: float = 10.0) -> str:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.paste_buffer() == text:
                return text
            time.sleep(0.1)
        raise AssertionError(
            f"the paste buffer never became {text!r}: it is {self.paste_buffer()!r}; the screen "
            f"was:\n{self.screen()}"
        )

    def keys(self, *keys: str) -> None:
        for key in keys:
            self._tmux("send-keys", "-t", "e2e", key)
            time.sleep(0.05)

    def press(self, key: str, times: int) -> None:
        """`key` `times` times over, in one go (tmux's send-keys -N)."""
        self._tmux("send-keys", "-t", "e2e", "-N", str(times), key)

    def settled_screen(self, quiet: float = 0.2, timeout: float = 5.0) -> str:
        """The screen once it has stopped changing for `quiet` seconds."""
        deadline = time.monotonic() + timeout
        last = self.screen()
        while time.monotonic() < deadline:
            time.sleep(quiet)
            screen = self.screen()
            if screen == last:
                return screen
            last = screen
        return last

    def wait_for(self, text: str | re.Pattern, timeout: float = 20.0) -> str:
        """Wait until the screen shows `text` (a substring, or a match of a pattern); the screen."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            screen = self.screen()
            if shows(screen, text):
                return screen
            time.sleep(0.1)
        raise AssertionError(f"{text!r} never appeared; the screen was:\n{self.screen()}")

    def wait_until(self, check, what: str, timeout: float = 20.0) -> str:
        """Wait until `check(screen)` holds; the screen."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            screen = self.screen()
            if check(screen):
                return screen
            time.sleep(0.1)
        raise AssertionError(f"never {what}; the screen was:\n{self.screen()}")

    def wait_for_gone(self, text: str | re.Pattern, timeout: float = 20.0) -> str:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            screen = self.screen()
            if not shows(screen, text):
                return screen
            time.sleep(0.1)
        raise AssertionError(f"{text!r} never went away; the screen was:\n{self.screen()}")

    def exit_status(self, timeout: float = 10.0) -> int:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            status = self.status_file.read_text().strip() if self.status_file.exists() else ""
            if status:
                return int(status)
            time.sleep(0.1)
        raise AssertionError("cachetui did not exit")

    def close(self) -> None:
        subprocess.run([TMUX, "-L", self.socket, "kill-server"], capture_output=True)
