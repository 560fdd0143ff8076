"""End to end: the installed `cachetui` in a real terminal (tmux), read off the screen.

It runs from an unrelated directory, so it also proves that the styles and the sample
data ship with the installed package. Each terminal (helpers.Terminal) is a tmux server of
its own.
"""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from helpers import BUILDCACHE, FILTERS_PANE, SAMPLE, WIDE, Terminal, pane_title, shows

pytestmark = pytest.mark.e2e


@pytest.fixture(params=[(80, 24), (160, 48)], ids=lambda s: f"{s[0]}x{s[1]}")
def terminal(request, tmp_path: Path):
    term = Terminal(*request.param, cwd=tmp_path)
    yield term
    term.close()


def test_browse_search_lookup_and_quit(terminal: Terminal) -> None:
    terminal.wait_for(SAMPLE.status())
    screen = terminal.wait_for(
        pane_title("Specs of py-ml-dtypes")
    )  # the spec list may follow the counts by a frame
    assert "py-ml-dtypes" in screen and shows(screen, pane_title("Packages"))
    assert "Traceback" not in screen
    if (
        terminal.width < WIDE
    ):  # the filters are folded away at start: f shows them, f again hides them
        assert not shows(screen, FILTERS_PANE)
        terminal.keys("f")
        terminal.wait_for(FILTERS_PANE)
        terminal.keys("f")
        terminal.wait_for_gone(FILTERS_PANE)
    else:
        assert shows(screen, FILTERS_PANE)

    terminal.keys("/", *"safet")
    screen = terminal.wait_for(
        f"1 of 3 packages · {SAMPLE.specs_of['py-safetensors']} of {SAMPLE.specs} specs"
    )
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
    first = next(
        c
        for c in sorted({h[0] for h in SAMPLE.hashes})
        if 2 <= sum(h[0] == c for h in SAMPLE.hashes) <= 8
    )
    sharing = [h for h in SAMPLE.hashes if h[0] == first]
    chosen = next(h for h in sharing if sum(o.startswith(h[:4]) for o in SAMPLE.hashes) == 1)
    spec = next(r for r in SAMPLE.records if r["hash"] == chosen)
    terminal.wait_for(SAMPLE.status())
    terminal.keys("/", *"py", "C-g", first)  # ctrl+g while typing a search
    terminal.wait_for(f"{len(sharing)} specs have a hash starting with /{first}")
    # (the candidate list may be painted a frame after the count)
    screen = terminal.wait_until(
        lambda s: all(f"/{h}" in s for h in sharing), f"all of {sharing} listed"
    )
    assert all(f"/{h}" in screen for h in sharing)
    if terminal.width >= 120:  # room for the whole line, as Spack writes a spec
        compiler = spec["compiler"].replace("@=", "@")
        assert (
            f"@{spec['versions'][0]} arch={spec['platform']}-{spec['os']}-{spec['target']} "
            f"%{compiler} /{chosen}" in screen
        )
    terminal.keys(*chosen[1:4])
    terminal.wait_for(f"1 spec has a hash starting with /{chosen[:4]}")
    terminal.keys("Enter")
    screen = terminal.wait_for(f"Specs of {SAMPLE.package_of[chosen]}")
    assert (
        f" {chosen[:7]} " in screen and "Traceback" not in screen
    )  # its row, in view in the spec list
    terminal.keys("C-q")
    assert terminal.exit_status() == 0


MIRROR = BUILDCACHE / "db-v8"


def test_a_mirror_root_and_a_jump_along_a_dependency(tmp_path: Path) -> None:
    """cmake's detail pane lists its link/run tree and build dependencies; down to zlib and
    enter go to zlib's spec."""
    term = Terminal(
        160, 48, cwd=tmp_path, args=(str(MIRROR), "--cache-dir", str(tmp_path / "cache"))
    )
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
