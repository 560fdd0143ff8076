"""End to end: the installed `cachetui` in a real terminal (tmux), read off the screen.

It runs from an unrelated directory, so it also proves that the styles and the sample
data ship with the installed package.
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest
from conftest import SAMPLE

pytestmark = pytest.mark.e2e

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

    def __init__(self, width: int, height: int, cwd: Path, args: tuple[str, ...] = (),
                 env: dict[str, str] | None = None, tmux_options: dict[str, str] | None = None) -> None:
        assert TMUX, "tmux is needed for the end-to-end tests (.ci/run installs it)"
        assert INSTALLED.exists(), f"cachetui is not installed beside {sys.executable}: pip install ."
        self.socket = f"cachetui-test-{uuid.uuid4().hex[:8]}"
        self.width = width
        self.height = height
        # A shell runs cachetui and writes its exit status to a file: tmux 3.3 sometimes
        # leaves an exited pane process unreaped (a zombie) and never records its status.
        self.status_file = cwd / f"exit-status-{self.socket}"
        command = f"{shlex.join([str(INSTALLED), *args])}; echo $? > {shlex.quote(str(self.status_file))}"
        # The server starts with this environment, and the pane inherits it.
        full_env = {**os.environ, "TERM": "xterm-256color", **(env or {})}
        # Options in the config file hold from the server's start: set afterwards, the
        # app could already be running (and writing) before they apply.
        self.tmux_conf = cwd / f"tmux-{self.socket}.conf"
        self.tmux_conf.write_text("".join(f"set-option -g {name} {shlex.quote(value)}\n" for name, value in (tmux_options or {}).items()))
        self._tmux("-f", str(self.tmux_conf), "new-session", "-d", "-s", "e2e", "-x", str(width), "-y", str(height),
                   "-c", str(cwd), command, env=full_env)
        self._tmux("set-option", "-t", "e2e", "remain-on-exit", "on")

    def _tmux(self, *args: str, env=None) -> str:
        done = subprocess.run([TMUX, "-L", self.socket, *args], capture_output=True, text=True, env=env, timeout=10)
        assert done.returncode == 0, done.stderr
        return done.stdout

    def tmux(self, *args: str) -> subprocess.CompletedProcess:
        """Any tmux command on this terminal's server, unchecked (e.g. show-buffer, which fails while there is none)."""
        return subprocess.run([TMUX, "-L", self.socket, *args], capture_output=True, text=True, timeout=10)

    def screen(self) -> str:
        return self._tmux("capture-pane", "-p", "-t", "e2e")

    def screen_with_attributes(self) -> str:
        """The screen with its colours and attributes, as SGR escape sequences."""
        return self._tmux("capture-pane", "-e", "-p", "-t", "e2e")

    def status_line(self) -> str:
        """The app's status line (`n of N packages · m of M specs` and what follows)."""
        lines = [line for line in self.screen().splitlines() if " packages · " in line and " specs" in line]
        return lines[-1].strip() if lines else ""

    def wait_for_status(self, text: str, timeout: float = 20.0) -> str:
        """Wait until the status line starts with `text`; the status line."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            line = self.status_line()
            if line.startswith(text):
                return line
            time.sleep(0.1)
        raise AssertionError(f"the status line never started with {text!r}; the screen was:\n{self.screen()}")

    def paste_buffer(self) -> str | None:
        """tmux's newest paste buffer (what an OSC 52 copy set, with set-clipboard on); None if none."""
        done = self.tmux("show-buffer")
        return done.stdout if done.returncode == 0 else None

    def wait_for_paste_buffer(self, text: str, timeout: float = 10.0) -> str:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.paste_buffer() == text:
                return text
            time.sleep(0.1)
        raise AssertionError(f"the paste buffer never became {text!r}: it is {self.paste_buffer()!r}; the screen was:\n{self.screen()}")

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


@pytest.fixture(params=[(80, 24), (160, 48)], ids=lambda s: f"{s[0]}x{s[1]}")
def terminal(request, tmp_path: Path):
    term = Terminal(*request.param, cwd=tmp_path)
    yield term
    term.close()


def test_browse_search_lookup_and_quit(terminal: Terminal) -> None:
    terminal.wait_for(SAMPLE.status())
    screen = terminal.wait_for(pane_title("Specs of py-ml-dtypes"))  # the spec list may follow the counts by a frame
    assert "py-ml-dtypes" in screen and shows(screen, pane_title("Packages"))
    assert "Traceback" not in screen
    if terminal.width < WIDE:  # the filters are folded away at start: f shows them, f again hides them
        assert not shows(screen, FILTERS_PANE)
        terminal.keys("f")
        terminal.wait_for(FILTERS_PANE)
        terminal.keys("f")
        terminal.wait_for_gone(FILTERS_PANE)
    else:
        assert shows(screen, FILTERS_PANE)

    terminal.keys("/", *"safet")
    screen = terminal.wait_for(f"1 of 3 packages · {SAMPLE.specs_of['py-safetensors']} of {SAMPLE.specs} specs")
    assert "py-safetensors" in screen and "py-mpi4py" not in screen

    terminal.keys(*["BSpace"] * 5)
    terminal.wait_for(SAMPLE.status())
    terminal.keys(*"/2feova4", "Enter")
    screen = terminal.wait_for("Specs of py-mpi4py")
    assert "2feova4" in screen
    if terminal.width < WIDE:  # the detail pane is folded away: d brings it
        terminal.keys("d")
        screen = terminal.wait_for("py-mpi4py@4.0.1")
    assert "py-mpi4py@4.0.1" in screen

    terminal.keys("q")
    assert terminal.exit_status() == 0
    assert "Traceback" not in terminal.screen()


def test_facet_toggle_from_the_keyboard(terminal: Terminal) -> None:
    terminal.wait_for(SAMPLE.status())
    if terminal.width < WIDE:
        terminal.keys("f")  # folded away at start: f shows the filters and moves there
        terminal.wait_for(FILTERS_PANE)
    else:
        terminal.keys("BTab", "BTab")  # from the package list, past the search box, to the filters
    # The sidebar opens on the Stacks header; the first value is data-vis-sdk (py-mpi4py only).
    terminal.keys("Down", "Space")
    in_stack = sum("data-vis-sdk" in r["stacks"] for r in SAMPLE.records)
    screen = terminal.wait_for(f"1 of 3 packages · {in_stack} of {SAMPLE.specs} specs")
    assert "[x] data-vis-sdk" in screen
    terminal.keys("C-q")
    assert terminal.exit_status() == 0


def test_go_to_hash_from_the_search_box(terminal: Terminal) -> None:
    # A first character a few hashes share (all of them fit the list at 80x24), and one of
    # those hashes with a 4-character prefix of its own.
    first = next(c for c in sorted({h[0] for h in SAMPLE.hashes}) if 2 <= sum(h[0] == c for h in SAMPLE.hashes) <= 8)
    sharing = [h for h in SAMPLE.hashes if h[0] == first]
    chosen = next(h for h in sharing if sum(o.startswith(h[:4]) for o in SAMPLE.hashes) == 1)
    spec = next(r for r in SAMPLE.records if r["hash"] == chosen)
    terminal.wait_for(SAMPLE.status())
    terminal.keys("/", *"py", "C-g", first)  # ctrl+g while typing a search
    terminal.wait_for(f"{len(sharing)} specs have a hash starting with /{first}")
    # (the candidate list may be painted a frame after the count)
    screen = terminal.wait_until(lambda s: all(f"/{h}" in s for h in sharing), f"all of {sharing} listed")
    assert all(f"/{h}" in screen for h in sharing)
    if terminal.width >= 120:  # room for the whole line, as Spack writes a spec
        compiler = spec["compiler"].replace("@=", "@")
        assert f"@{spec['versions'][0]} arch={spec['platform']}-{spec['os']}-{spec['target']} %{compiler} /{chosen}" in screen
    terminal.keys(*chosen[1:4])
    terminal.wait_for(f"1 spec has a hash starting with /{chosen[:4]}")
    terminal.keys("Enter")
    screen = terminal.wait_for(f"Specs of {SAMPLE.package_of[chosen]}")
    assert f" {chosen[:7]} " in screen and "Traceback" not in screen  # its row, in view in the spec list
    terminal.keys("C-q")
    assert terminal.exit_status() == 0


MIRROR = Path(__file__).parent / "fixtures" / "buildcache" / "db-v8"


def test_a_mirror_root_and_a_jump_along_a_dependency(tmp_path: Path) -> None:
    """cmake's detail pane lists its link/run tree and build dependencies; down to zlib and
    enter go to zlib's spec."""
    term = Terminal(160, 48, cwd=tmp_path, args=(str(MIRROR), "--cache-dir", str(tmp_path / "cache")))
    try:
        term.wait_for("6 of 6 packages · 6 of 6 specs")
        term.keys("/", *"cmake")
        term.wait_for("1 of 6 packages · 1 of 6 specs")
        term.keys("Escape")  # to the package list
        time.sleep(0.5)  # (an escape byte with another key right after it reads as alt+key)
        term.keys("Enter")  # its specs
        term.wait_for("Specs of cmake")
        term.keys("Enter")  # the detail pane: its footer offers the jump
        term.wait_for("Go to dependency")
        term.wait_for("manifest ")  # the v3 spec manifest's path, in the detail
        term.keys("Down")  # the first dependency line (gcc-runtime), scrolled into view
        term.wait_for("gcc-runtime@10.2.1 /f6cqqn6 [link]")
        term.keys("Down", "Enter")  # zlib (name order), and go
        screen = term.wait_for("Specs of zlib")
        assert "qc2kbmep6ljm5ks5x27ktsazlbhki34m" in screen and "Traceback" not in screen
        term.keys("C-q")
        assert term.exit_status() == 0
    finally:
        term.close()
