"""End to end, as over SSH: the installed `cachetui` in tmux at 80x24 (and 160x48 where
the layout differs), checked by what a user sees: folded panes, the clipboard (tmux's
paste buffer, filled by OSC 52 when `set-clipboard` is on), the pager, the command
palette, the config file, colours and the help.
"""

from __future__ import annotations

import json
import re
import shlex
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from helpers import FILTERS_PANE, INSTALLED, SAMPLE, WIDE, Terminal, pane_title, shows

pytestmark = pytest.mark.e2e

DETAIL_PANE = pane_title("Detail")
PACKAGES_PANE = pane_title("Packages")
LOOKUP_BOX = pane_title("Go to hash")  # the hash lookup (not the footer's `^g Go to hash`)
CLIPBOARD = {"set-clipboard": "on"}  # tmux keeps an application's OSC 52 as a paste buffer
SETTLE = 0.3  # after Escape, before the next key (else ESC+key reads as alt+key)


@pytest.fixture
def start(tmp_path: Path):
    """Start cachetui in a new tmux terminal (80x24 unless told); all are closed at the end."""
    started: list[Terminal] = []

    def start(
        width: int = 80,
        height: int = 24,
        args: tuple[str, ...] = (),
        env: dict[str, str] | None = None,
        tmux_options: dict[str, str] | None = None,
    ) -> Terminal:
        term = Terminal(
            width, height, cwd=tmp_path, args=tuple(args), env=env, tmux_options=tmux_options
        )
        started.append(term)
        return term

    yield start
    for term in started:
        term.close()


# -- reading the screen ---------------------------------------------------------------------


def specs_of(package: str) -> re.Pattern:
    """The spec list's border title while it lists `package`."""
    return pane_title(f"Specs of {package}")


def notification_text(screen: str) -> str:
    """The text of the notifications (toasts) on screen, joined, with all whitespace removed
    (a toast wraps a long path or hash wherever it likes)."""
    parts = []
    for line in screen.splitlines():
        if "▌" in line:  # a toast's left edge; what follows is its text, then the pane's border
            parts.append(line.split("▌", 1)[1].rstrip().rstrip("│╮╯─").rstrip())
    return re.sub(r"\s+", "", "".join(parts))


def wait_for_notification(term: Terminal, *texts: str, timeout: float = 20.0) -> str:
    """Wait until the notifications on screen hold every one of `texts` (whitespace aside)."""
    wanted = [re.sub(r"\s+", "", t) for t in texts]
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        shown = notification_text(term.screen())
        if all(w in shown for w in wanted):
            return shown
        time.sleep(0.1)
    raise AssertionError(f"no notification with {texts!r}; the screen was:\n{term.screen()}")


def spec_rows(screen: str) -> list[str]:
    """The 7-character hashes the spec list shows, top to bottom (with the lists' layout at
    80 columns, the spec list is the rightmost list)."""
    return re.findall(r"[│┃╮╯┓┛][│┃] ([a-z2-7]{7}) \S", screen)


def first_spec_row(term: Terminal, timeout: float = 20.0) -> str:
    """The full hash of the first spec in the spec list, once the list shows one."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        rows = spec_rows(term.screen())
        if rows:
            return full_hash(rows[0])
        time.sleep(0.1)
    raise AssertionError(f"the spec list shows no spec; the screen was:\n{term.screen()}")


def full_hash(short: str) -> str:
    found = [h for h in SAMPLE.hashes if h.startswith(short)]
    assert len(found) == 1, (short, found)
    return found[0]


def buffers(term: Terminal) -> list[str]:
    """tmux's paste buffers, one line each (one per copy the app made)."""
    return [line for line in term.tmux("list-buffers").stdout.splitlines() if line]


def colour_sgr(screen_with_attributes: str) -> list[str]:
    """Every colour an SGR sequence sets (38;5;n, 48;2;r;g;b, 31, 102, ...): not the defaults
    (39, 49), nor attributes (bold, reverse, ...)."""
    colours = []
    for params in re.findall(r"\x1b\[([0-9;:]*)m", screen_with_attributes):
        codes = [int(p) if p.isdigit() else 0 for p in re.split(r"[;:]", params)] if params else [0]
        i = 0
        while i < len(codes):
            code = codes[i]
            if code in (38, 48, 58) and i + 1 < len(codes):
                size = 3 if codes[i + 1] == 5 else 5 if codes[i + 1] == 2 else 2
                colours.append(";".join(map(str, codes[i : i + size])))
                i += size
                continue
            if 30 <= code <= 37 or 40 <= code <= 47 or 90 <= code <= 97 or 100 <= code <= 107:
                colours.append(str(code))
            i += 1
    return colours


def unique_prefix_hash(package: str, length: int = 5) -> str:
    """A hash of `package` that its first `length` characters name alone (the first of the
    package's summary left out, so that it is not the one highlighted at start)."""
    own = [h for h in SAMPLE.hashes if SAMPLE.package_of[h] == package]
    return next(
        h for h in sorted(own[1:]) if sum(o.startswith(h[:length]) for o in SAMPLE.hashes) == 1
    )


def go_to_hash(term: Terminal, digest: str, length: int = 5) -> None:
    """ctrl+g, the first characters of `digest`, enter: its spec highlighted in the spec list."""
    term.keys("C-g")
    term.wait_for(LOOKUP_BOX)
    term.keys(*digest[:length])
    term.wait_for(f"1 spec has a hash starting with /{digest[:length]}")
    term.keys("Enter")
    term.wait_for(f"Specs of {SAMPLE.package_of[digest]}")
    term.wait_for_gone(LOOKUP_BOX)


def packages_with(**where: str) -> int:
    return len(
        {
            SAMPLE.package_of[r["hash"]]
            for r in SAMPLE.records
            if all(r[k] == v for k, v in where.items())
        }
    )


# What the status line ends with when cachetui is given no source (and Spack has no mirror).
SHOWN = " · the sample data"


def status_for(**where: str) -> str:
    return (
        f"{packages_with(**where)} of {len(SAMPLE.packages)} packages"
        f" · {SAMPLE.count(**where)} of {SAMPLE.specs} specs"
    )


# -- layout -----------------------------------------------------------------------------------


def test_narrow_terminal_folds_filters_and_detail(start: Callable[..., Terminal]) -> None:
    term = start()
    term.wait_for(SAMPLE.status())
    screen = term.wait_for(
        specs_of(SAMPLE.packages[0])
    )  # (the spec list follows a frame after the counts)
    assert not shows(screen, FILTERS_PANE) and not shows(
        screen, DETAIL_PANE
    )  # folded away at start
    assert shows(screen, PACKAGES_PANE) and shows(
        screen, specs_of(SAMPLE.packages[0])
    )  # the lists are there
    assert all(name in screen for name in SAMPLE.packages)
    # No filter is on: after the counts only what is shown (no source given: the sample data).
    assert term.status_line() == SAMPLE.status() + SHOWN

    # f: the filters, focused; move to ubuntu24.04 (as many rows below the first header as
    # on screen) and toggle it with space.
    term.keys("f")
    screen = term.wait_for(FILTERS_PANE)
    lines = screen.splitlines()
    header = next(i for i, line in enumerate(lines) if "▾ Stacks" in line)
    value = next(i for i, line in enumerate(lines) if "] ubuntu24.04 " in line)
    term.keys(*["Down"] * (value - header), "Space")
    term.wait_for_status(status_for(os="ubuntu24.04"))
    term.wait_for("[x] ubuntu24.04")

    # f again: folded, and the status line says a filter still narrows the lists.
    term.keys("f")
    term.wait_for_gone(FILTERS_PANE)
    # (The sample data is not named: it no longer fits in 80 columns after the filters.)
    assert term.status_line() == f"{status_for(os='ubuntu24.04')} · filters: os=ubuntu24.04 (f)"

    # d: the detail pane, about the highlighted spec (the first in the spec list, once the
    # list shows only what the filter lets through).
    ubuntu24 = {r["hash"][:7] for r in SAMPLE.records if r["os"] == "ubuntu24.04"}
    screen = term.wait_until(
        lambda s: spec_rows(s) and set(spec_rows(s)) <= ubuntu24, "only ubuntu24.04 specs listed"
    )
    first = full_hash(spec_rows(screen)[0])
    term.keys("d")
    term.wait_for(DETAIL_PANE)
    term.wait_for(f"hash     {first}")

    # F3 folds it again; enter on a package, then on a spec, unfolds it.
    term.keys("F3")
    term.wait_for_gone(DETAIL_PANE)
    term.keys("Enter")  # the package list: to its specs
    time.sleep(0.2)
    term.keys("Enter")  # the spec: its detail
    term.wait_for(DETAIL_PANE)
    term.wait_until(
        lambda s: spec_rows(s) and f"hash     {full_hash(spec_rows(s)[0])}" in s,
        "the first spec's hash in the detail pane",
    )

    # F2 shows the filters too, and the ` · filters:` note goes (they are in sight).
    term.keys("F2")
    term.wait_for(FILTERS_PANE)
    assert term.status_line() == status_for(os="ubuntu24.04") + SHOWN
    assert "Traceback" not in term.screen()
    term.keys("C-q")
    assert term.exit_status() == 0


def test_wide_terminal_shows_every_pane(start: Callable[..., Terminal]) -> None:
    term = start(160, 48)
    assert 160 >= WIDE
    term.wait_for(SAMPLE.status())
    term.wait_for(DETAIL_PANE)
    first = first_spec_row(term)
    screen = term.wait_for(
        f"hash     {first}"
    )  # the highlighted spec (the first in the list), in detail
    for pane in (FILTERS_PANE, PACKAGES_PANE, specs_of(SAMPLE.packages[0]), DETAIL_PANE):
        assert shows(screen, pane), pane
    assert "▾ OS" in screen and "ubuntu24.04" in screen
    term.keys("q")
    assert term.exit_status() == 0


# -- clipboard ---------------------------------------------------------------------------------


def test_copy_hash_and_install_command_to_the_clipboard(start: Callable[..., Terminal]) -> None:
    term = start(tmux_options=CLIPBOARD)
    term.wait_for(SAMPLE.status())
    chosen = unique_prefix_hash(SAMPLE.packages[-1])
    go_to_hash(term, chosen)
    assert term.paste_buffer() is None  # nothing copied yet

    term.keys("y")
    term.wait_for_paste_buffer(chosen)
    wait_for_notification(term, "Copied hash", chosen)  # shown too, to select by hand

    term.keys("Y")
    term.wait_for_paste_buffer(f"spack install /{chosen}")
    wait_for_notification(term, "Copied install command", f"spack install /{chosen}")

    # The sample data knows no tarball URLs: U says so, and copies nothing.
    term.keys("U")
    wait_for_notification(term, "No tarball URL is known", f"/{chosen[:7]}")
    assert term.paste_buffer() == f"spack install /{chosen}"
    assert len(buffers(term)) == 2, buffers(term)  # one copy per key
    term.keys("q")
    assert term.exit_status() == 0


def test_y_in_the_search_box_is_typed_not_copied(start: Callable[..., Terminal]) -> None:
    term = start(tmux_options=CLIPBOARD)
    term.wait_for(SAMPLE.status())
    term.keys("/", "y")
    term.wait_for("│  y ")  # typed into the search box
    term.keys("Escape")  # leaves the search box (for the package list)
    time.sleep(SETTLE)
    term.keys("y")  # now it copies
    shown = wait_for_notification(term, "Copied hash")
    copied = term.paste_buffer()
    assert copied in SAMPLE.hashes and copied in shown
    assert len(buffers(term)) == 1, buffers(term)  # the y typed in the box copied nothing
    assert "│  y " in term.screen()  # and it is still there
    term.keys("q")
    assert term.exit_status() == 0


# -- pager -------------------------------------------------------------------------------------


def test_view_the_record_in_the_pager(start: Callable[..., Terminal], tmp_path: Path) -> None:
    out = tmp_path / "record.json"
    term = start(env={"PAGER": f"cat > {shlex.quote(str(out))}"})
    term.wait_for(SAMPLE.status())
    chosen = unique_prefix_hash(SAMPLE.packages[1])
    go_to_hash(term, chosen)
    term.keys("v")
    deadline = time.monotonic() + 20
    record = None
    while record is None and time.monotonic() < deadline:
        try:
            record = json.loads(out.read_text(encoding="utf-8"))
        except (FileNotFoundError, ValueError):
            time.sleep(0.1)
    assert record is not None, (
        f"the pager got no JSON: {out.read_text() if out.exists() else '(no file)'!r}"
    )
    assert record["hash"] == chosen
    assert record["package"] == SAMPLE.package_of[chosen]
    # Back in the app, which still answers keys.
    term.wait_for_status(SAMPLE.status())
    term.wait_for(specs_of(SAMPLE.package_of[chosen]))
    term.keys("d")
    term.wait_for(DETAIL_PANE)
    term.wait_for(chosen)
    term.keys("q")
    assert term.exit_status() == 0


def test_a_pager_that_does_not_exist(start: Callable[..., Terminal]) -> None:
    term = start(env={"PAGER": "cachetui-no-such-pager-here"})
    term.wait_for(SAMPLE.status())
    term.keys("v")
    wait_for_notification(term, "Pager", "cachetui-no-such-pager-here", "could not run")
    term.wait_for_status(SAMPLE.status())
    term.keys("f")  # still running, and answering
    term.wait_for(FILTERS_PANE)
    assert "Traceback" not in term.screen()
    term.keys("q")
    assert term.exit_status() == 0


# -- command palette ---------------------------------------------------------------------------


def test_palette_goes_to_a_package_a_filter_and_a_hash(start: Callable[..., Terminal]) -> None:
    term = start()
    term.wait_for(SAMPLE.status())
    term.wait_for(specs_of("py-ml-dtypes"))

    term.keys("C-p")
    term.wait_for("Search for commands")
    term.keys(*"mpi4py")
    term.wait_for("Package: py-mpi4py")
    term.keys("Enter")
    term.wait_for(specs_of("py-mpi4py"))
    term.wait_for_gone("Package: py-mpi4py")

    term.keys("C-p")
    term.wait_for("Search for commands")
    term.keys(*"os=ubuntu22.04")
    term.wait_for("Filter: os=ubuntu22.04")
    term.keys("Enter")
    line = term.wait_for_status(status_for(os="ubuntu22.04"))
    assert (
        line == f"{status_for(os='ubuntu22.04')} · filters: os=ubuntu22.04 (f)"
    )  # the filters are folded

    term.keys("C-p")
    term.wait_for("Search for commands")
    term.keys(*"Clear filters")
    term.wait_for("Clear every filter")
    term.keys("Enter")
    assert term.wait_for_status(SAMPLE.status()) == SAMPLE.status() + SHOWN

    chosen = unique_prefix_hash("py-safetensors", 6)
    term.keys("C-p")
    term.wait_for("Search for commands")
    term.keys(*f"/{chosen[:6]}")
    term.wait_for(f"Hash: /{chosen[:6]}")
    term.keys("Enter")
    term.wait_for(specs_of("py-safetensors"))
    term.keys("d")
    term.wait_for(chosen)  # its detail
    term.keys("q")
    assert term.exit_status() == 0


def test_palette_theme_is_remembered(start: Callable[..., Terminal], tmp_path: Path) -> None:
    import os

    state = Path(os.environ["XDG_STATE_HOME"]) / "cachetui" / "state.json"
    first = start()
    first.wait_for(SAMPLE.status())
    default_colours = set(colour_sgr(first.screen_with_attributes()))
    first.keys("C-p")
    first.wait_for("Search for commands")
    first.keys(*"theme nord")
    first.wait_for("Theme: nord")
    first.keys("Enter")
    first.wait_for_gone("Theme: nord")
    deadline = time.monotonic() + 10
    while (
        not (state.exists() and json.loads(state.read_text() or "{}").get("theme") == "nord")
        and time.monotonic() < deadline
    ):
        time.sleep(0.1)
    assert json.loads(state.read_text())["theme"] == "nord"
    first.keys("q")
    assert first.exit_status() == 0

    again = start()
    again.wait_for(SAMPLE.status())
    time.sleep(0.3)
    assert (
        set(colour_sgr(again.screen_with_attributes())) != default_colours
    )  # not the default theme's colours
    again.keys("C-p")
    again.wait_for("Search for commands")
    again.keys(*"theme nord")
    screen = again.wait_for("Theme: nord")
    screen = again.wait_for("the current theme")
    lines = screen.splitlines()
    assert (
        "the current theme"
        in lines[next(i for i, line in enumerate(lines) if "Theme: nord" in line) + 1]
    )
    again.keys("Escape")
    time.sleep(SETTLE)
    again.keys("q")
    assert again.exit_status() == 0

    shown = subprocess.run(
        [str(INSTALLED), "config"], capture_output=True, text=True, cwd=tmp_path, timeout=30
    )
    assert shown.returncode == 0, shown.stderr
    theme_row = next(line for line in shown.stdout.splitlines() if line.startswith("theme "))
    assert '"nord"' in theme_row and f"remembered ({state})" in theme_row


# -- config file -------------------------------------------------------------------------------


def test_config_keymap_and_theme(start: Callable[..., Terminal], tmp_path: Path) -> None:
    config = tmp_path / "config.toml"
    config.write_text('theme = "nord"\n\n[keymap]\ncopy-hash = "w"\n', encoding="utf-8")
    term = start(args=("--config", str(config)), tmux_options=CLIPBOARD)
    term.wait_for(SAMPLE.status())
    screen = term.wait_for(" w Copy hash ")  # the footer names the new key
    assert "Config" not in notification_text(screen)  # a good file: no warning
    first = first_spec_row(term)
    term.keys("y")  # no longer the copy key
    term.keys("w")
    term.wait_for_paste_buffer(first)
    wait_for_notification(term, "Copied hash", first)
    assert len(buffers(term)) == 1, buffers(term)  # w copied, y did not
    term.keys("C-p")
    term.wait_for("Search for commands")
    term.keys(*"theme nord")
    term.wait_for("the current theme")  # the config file's theme
    term.keys("Escape")
    time.sleep(SETTLE)
    term.keys("q")
    assert term.exit_status() == 0

    shown = subprocess.run(
        [str(INSTALLED), "config", "--config", str(config)],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=30,
    )
    assert shown.returncode == 0, shown.stderr
    rows = [line.split() for line in shown.stdout.splitlines()]
    assert ["keymap.copy-hash", '"w"', str(config)] in rows, shown.stdout
    assert ["theme", '"nord"', str(config)] in rows, shown.stdout


def test_config_with_a_bad_colour_warns_and_starts(
    start: Callable[..., Terminal], tmp_path: Path
) -> None:
    config = tmp_path / "bad.toml"
    config.write_text('color = "blue"\n', encoding="utf-8")
    term = start(args=("--config", str(config)))
    term.wait_for(SAMPLE.status())
    wait_for_notification(term, "Config", str(config), "'color'")
    term.keys("/", *"safet")  # and it works
    term.wait_for_status(
        f"1 of 3 packages · {SAMPLE.specs_of['py-safetensors']} of {SAMPLE.specs} specs"
    )
    term.keys("C-q")
    assert term.exit_status() == 0


# -- colour and mouse --------------------------------------------------------------------------


def test_color_none_is_monochrome(start: Callable[..., Terminal]) -> None:
    coloured = start()
    coloured.wait_for(SAMPLE.status())
    time.sleep(0.3)
    assert colour_sgr(coloured.screen_with_attributes()), "the default should be in colour"

    plain = start(args=("--color", "none"))
    plain.wait_for(SAMPLE.status())
    time.sleep(0.3)
    screen = plain.screen_with_attributes()
    assert "\x1b[" in screen  # attributes are still there (bold, reverse, ...)
    assert not colour_sgr(screen), sorted(set(colour_sgr(screen)))
    plain.keys("f")  # and it works
    plain.wait_for(FILTERS_PANE)
    assert not colour_sgr(plain.screen_with_attributes())
    plain.keys("q")
    assert plain.exit_status() == 0


def _mouse_flags(term: Terminal) -> str:
    done = term.tmux(
        "display-message",
        "-p",
        "-t",
        "e2e",
        "#{mouse_any_flag}#{mouse_button_flag}#{mouse_standard_flag}#{mouse_all_flag}",
    )
    return done.stdout.strip()


def test_no_mouse_leaves_the_mouse_to_the_terminal(start: Callable[..., Terminal]) -> None:
    with_mouse = start()
    with_mouse.wait_for(SAMPLE.status())
    assert "1" in _mouse_flags(with_mouse)  # by default the app asks for mouse reports

    term = start(args=("--no-mouse",))
    term.wait_for(SAMPLE.status())
    assert set(_mouse_flags(term)) == {"0"}  # tmux knows the pane asked for no mouse mode
    term.keys("/", *"mpi4py")
    term.wait_for_status(
        f"1 of 3 packages · {SAMPLE.specs_of['py-mpi4py']} of {SAMPLE.specs} specs"
    )
    term.keys("C-q")
    assert term.exit_status() == 0


# -- help --------------------------------------------------------------------------------------


def _binding_ids(tmp_path: Path) -> list[str]:
    """The binding ids of the installed app (the one in tmux), which its help lists: asked
    from another directory, so that the work tree's cachetui/ is not the one imported."""
    code = (
        "from cachetui.tui.app import HELP_OWNERS; from cachetui.tui.keys import binding_ids; "
        "print(*binding_ids(HELP_OWNERS))"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=tmp_path, timeout=60
    )
    assert done.returncode == 0, done.stderr
    return done.stdout.split()


def _page_through_help(
    term: Terminal, until: Callable[[str], bool], key: str = "PageDown", most: int = 40
) -> list[str]:
    """Press `key` until `until(screen)`, or at most `most` times, or until the view stops
    moving; every screen seen. Each press waits for the screen to settle first: a page down
    moves by the view's height, so no line goes by unseen, and keys sent together could
    be taken as one."""
    screens = [term.settled_screen()]
    for _ in range(most):
        if until(screens[-1]):
            break
        term.keys(key)
        screen = term.settled_screen()
        if screen == screens[-1]:
            break  # it scrolls no further
        screens.append(screen)
    return screens


def test_help_scrolls_to_the_last_binding_and_closes(
    start: Callable[..., Terminal], tmp_path: Path
) -> None:
    ids = _binding_ids(tmp_path)
    term = start()
    term.wait_for(SAMPLE.status())
    term.keys("?")
    term.wait_for("cachetui keys")
    screen = term.settled_screen()
    assert "binding id" in screen and f" {ids[0]} " in screen
    assert f" {ids[-1]} " not in screen  # 80x24 shows only the start
    term.keys("Down")  # a line
    term.wait_until(lambda s: s != screen, "scrolled by down")
    screens = _page_through_help(term, lambda s: f" {ids[-1]} " in s)
    assert f" {ids[-1]} " in screens[-1], screens[-1]
    term.keys("Escape")
    term.wait_for_gone("cachetui keys")
    time.sleep(SETTLE)
    assert term.status_line() == SAMPLE.status() + SHOWN
    term.keys("F1")  # F1 opens it too
    term.wait_for("cachetui keys")
    term.keys("Escape")
    term.wait_for_gone("cachetui keys")
    time.sleep(SETTLE)
    term.keys("q")
    assert term.exit_status() == 0


def test_help_shows_every_binding_id_in_full_at_80_columns(
    start: Callable[..., Terminal], tmp_path: Path
) -> None:
    """The ids are what a [keymap] table names: each must be readable whole, not cut."""
    ids = _binding_ids(tmp_path)
    term = start()
    term.wait_for(SAMPLE.status())
    term.keys("?")
    term.wait_for("cachetui keys")
    screens = _page_through_help(term, lambda s: f" {ids[-1]} " in s)
    seen = "\n".join(screens)
    missing = [i for i in ids if not re.search(rf"[│ ]{re.escape(i)} ", seen)]
    assert not missing, (
        f"binding ids not shown whole: {missing}; e.g. "
        f"{[line for line in seen.splitlines() if '…' in line][:3]}"
    )
    term.keys("Escape")
    time.sleep(SETTLE)
    term.keys("q")
    assert term.exit_status() == 0


def test_help_takes_keys_that_arrive_together(start: Callable[..., Terminal]) -> None:
    """Over SSH, keys typed or held in quick succession often arrive in one read: five downs
    sent at once must scroll the help as far as five downs sent one by one (the lists do)."""
    term = start()
    term.wait_for(SAMPLE.status())
    term.keys("?")
    term.wait_for("cachetui keys")
    top = term.settled_screen()
    for _ in range(5):
        term.keys("Down")
        term.settled_screen()
    one_by_one = term.settled_screen()
    assert one_by_one != top
    term.keys("Home")
    term.wait_until(lambda s: s == top, "back at the top")
    term.press("Down", 5)  # one write: five downs
    together = term.settled_screen()
    assert together == one_by_one, (
        f"five downs at once scrolled to:\n{together}\nfive one by one:\n{one_by_one}"
    )
    term.keys("Escape")
    time.sleep(SETTLE)
    term.keys("q")
    assert term.exit_status() == 0
