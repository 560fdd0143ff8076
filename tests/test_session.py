"""At home over SSH (issue 7), driven headless with Pilot at pinned sizes: the layout that
folds at 80 columns, help and palette from the bindings, copying by OSC 52, the pager,
the config file and its keymap, colours and the mouse."""

from __future__ import annotations

import base64
import contextlib
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import (
    SAMPLE,
    contrast,
    fake_hash,
    in_256_colours,
    record,
    settle,
    status,
    write_summary,
)

from cachetui.config import Config, load_config
from cachetui.tui.app import HELP_OWNERS, CacheTUI
from cachetui.tui.keys import key_entries
from cachetui.tui.screens.help import HelpScreen
from cachetui.tui.widgets.facet_sidebar import FacetSidebar
from cachetui.tui.widgets.package_list import PackageList
from cachetui.tui.widgets.spec_detail import SpecDetail
from cachetui.tui.widgets.spec_list import SpecList

NARROW, WIDE = (80, 24), (120, 40)


def shown(app, selector: str) -> bool:
    """The pane is laid out on the screen (not folded away)."""
    widget = app.screen.query_one(selector)
    return widget.display and widget.region.width > 0


def painted(app) -> str:
    return "\n".join(strip.text for strip in app.screen._compositor.render_strips())


def notes(app) -> list[tuple[str, str]]:
    """(title, message) of every notification so far."""
    return [(n.title, n.message) for n in app._notifications]


# -- layout ------------------------------------------------------------------------------------


async def test_at_80_columns_filters_and_detail_fold_away_and_come_back_with_a_key() -> None:
    app = CacheTUI()
    async with app.run_test(size=NARROW) as pilot:
        await settle(app, pilot)
        assert not shown(app, "#facets") and not shown(app, "#detail")
        assert shown(app, "#packages") and shown(app, "#specs") and status(app) == SAMPLE.status()
        await pilot.press("f")
        assert shown(app, "#facets") and app.focused is app.screen.query_one(FacetSidebar)  # shown to be used
        # Toggle the first OS there, then fold the filters again: the status line keeps saying so.
        sidebar = app.screen.query_one(FacetSidebar)
        sidebar.cursor = sidebar.lines.index(("os", "ubuntu22.04"))
        await pilot.press("space")
        await settle(app, pilot)
        on = SAMPLE.count(os="ubuntu22.04")
        assert f"{on} of {SAMPLE.specs} specs" in status(app)
        await pilot.press("f")
        await settle(app, pilot)
        assert not shown(app, "#facets") and app.focused is app.screen.query_one(PackageList)
        assert status(app).endswith(" · filters: os=ubuntu22.04 (f)")
        await pilot.press("d")
        await settle(app, pilot)
        row = app.screen.query_one(SpecList).highlighted_row
        assert shown(app, "#detail") and app.service.index.hashes[row] in painted(app)
        await pilot.press("d")
        assert not shown(app, "#detail")


async def test_enter_on_a_spec_unfolds_the_detail_pane() -> None:
    app = CacheTUI()
    async with app.run_test(size=NARROW) as pilot:
        await settle(app, pilot)
        await pilot.press("enter", "enter")  # packages -> specs -> detail
        await settle(app, pilot)
        assert shown(app, "#detail") and app.focused is app.screen.query_one(SpecDetail)
        await pilot.press("d")  # folding the focused pane hands the focus back to the specs
        assert not shown(app, "#detail") and app.focused is app.screen.query_one(SpecList)


async def test_at_120_columns_everything_shows_and_a_resize_lays_out_again() -> None:
    app = CacheTUI()
    async with app.run_test(size=WIDE) as pilot:
        await settle(app, pilot)
        for pane in ("#facets", "#packages", "#specs", "#detail"):
            assert shown(app, pane), pane
        await pilot.resize_terminal(90, 30)
        await settle(app, pilot)
        assert not shown(app, "#facets") and not shown(app, "#detail")
        await pilot.resize_terminal(130, 30)
        await settle(app, pilot)
        assert shown(app, "#facets") and shown(app, "#detail")


async def test_no_animation_by_default(monkeypatch) -> None:
    monkeypatch.delenv("TEXTUAL_ANIMATIONS", raising=False)
    assert CacheTUI().animation_level == "none"


# -- help, footer and palette agree ------------------------------------------------------------


def test_every_binding_has_an_id_and_a_description() -> None:
    from textual.binding import Binding

    for owner in HELP_OWNERS:
        for binding in owner.BINDINGS:
            assert isinstance(binding, Binding) and binding.id and binding.description, (owner.__name__, binding)
    ids = [entry.id for entry in key_entries(HELP_OWNERS)]
    assert len(ids) == len(set(ids))
    for wanted in ("toggle-filters", "toggle-detail", "copy-hash", "copy-install", "copy-url", "view-record",
                   "clear-filters", "command-palette", "help"):
        assert wanted in ids


async def test_help_follows_the_keymap_and_the_footer_names_match() -> None:
    app = CacheTUI(config=Config(keymap={"copy-hash": "w", "toggle-filters": "F"}))
    async with app.run_test(size=(120, 60)) as pilot:
        await settle(app, pilot)
        assert not [n for n in app._notifications if n.title.startswith("Config")]  # w and F are free keys
        footer = painted(app).splitlines()[-1]
        assert "Copy hash" in footer and "Filters" in footer and "Help" in footer
        await pilot.press("f1")
        assert isinstance(app.screen, HelpScreen)
        lines = painted(app).splitlines()
        copy_line = next(line for line in lines if " copy-hash" in line)
        assert " w " in copy_line and " y " not in copy_line
        filters_line = next(line for line in lines if " toggle-filters" in line)
        assert " F " in filters_line
        assert "Copy hash" in copy_line  # the footer's and the palette's name for it
        await pilot.press("escape")
        footer = painted(app).splitlines()[-1]
        assert "w Copy hash" in footer and "y Copy hash" not in footer and "F Filters" in footer
        # The remapped keys do it; the old ones do not.
        await pilot.press("y")
        assert app.clipboard == ""
        await pilot.press("w")
        assert app.clipboard == app.service.index.hashes[app.screen.query_one(SpecList).highlighted_row]


async def test_help_scrolls_to_its_last_binding_at_80x24() -> None:
    app = CacheTUI()
    async with app.run_test(size=NARROW) as pilot:
        await settle(app, pilot)
        await pilot.press("question_mark")
        last = key_entries(HELP_OWNERS)[-1].id
        assert last not in painted(app)
        for _ in range(6):
            await pilot.press("pagedown")
        assert last in painted(app)


async def palette(app, pilot, text: str, expect: str) -> list[str]:
    """Open the palette, type `text`, wait for a hit starting with `expect` at the top, choose it."""
    await pilot.press("ctrl+p")
    await pilot.press(*text)
    prompts: list[str] = []
    for _ in range(60):
        await pilot.pause(0.05)
        listing = app.screen.query("CommandList")
        if listing:
            options = listing.first()
            prompts = [str(options.get_option_at_index(i).prompt).split("\n")[0] for i in range(options.option_count)]
            if prompts and prompts[0].startswith(expect):
                break
    assert prompts and prompts[0].startswith(expect), prompts
    await pilot.press("enter")
    await settle(app, pilot)
    return prompts


async def test_palette_goes_to_a_package_toggles_a_filter_and_clears_them() -> None:
    app = CacheTUI()
    async with app.run_test(size=NARROW) as pilot:
        await settle(app, pilot)
        await palette(app, pilot, "mpi4py", "Package: py-mpi4py")
        packages = app.screen.query_one(PackageList)
        assert app.service.index.packages[packages.highlighted_package] == "py-mpi4py"
        await palette(app, pilot, "os=ubuntu22.04", "Filter: os=ubuntu22.04")
        having = len({SAMPLE.package_of[r["hash"]] for r in SAMPLE.records if r["os"] == "ubuntu22.04"})
        assert status(app).startswith(f"{having} of 3 packages · {SAMPLE.count(os='ubuntu22.04')} of {SAMPLE.specs} specs")
        await palette(app, pilot, "clear filt", "Clear filters")
        assert status(app) == SAMPLE.status()


async def test_palette_runs_the_bindings_by_their_footer_names() -> None:
    app = CacheTUI()
    async with app.run_test(size=NARROW) as pilot:
        await settle(app, pilot)
        await palette(app, pilot, "detail", "Detail")
        assert shown(app, "#detail")
        await palette(app, pilot, "copy hash", "Copy hash")
        assert app.clipboard == app.service.index.hashes[app.screen.query_one(SpecList).highlighted_row]


async def test_palette_looks_up_a_hash_and_switches_tags(synthetic: Path) -> None:
    app = CacheTUI([str(synthetic)])
    async with app.run_test(size=NARROW) as pilot:
        await settle(app, pilot)
        await palette(app, pilot, "/dddd", "Hash: /dddd")
        assert app.screen.query_one(SpecList).highlighted_row == app.service.index.lookup_hash(fake_hash(5, "dddd"))[0]
        await palette(app, pilot, "tag v1", "Tag: v1.0.0")
        assert status(app).startswith("1 of 3 packages · 1 of 7 specs")
        await palette(app, pilot, "all tags", "All tags")
        assert status(app).startswith("3 of 3 packages · 7 of 7 specs")


async def test_palette_picks_a_theme_and_it_is_remembered(tmp_path: Path) -> None:
    state = tmp_path / "state.json"
    app = CacheTUI(config=Config(state_path=state))
    async with app.run_test(size=NARROW) as pilot:
        await settle(app, pilot)
        assert not state.exists()  # starting is not choosing
        await palette(app, pilot, "theme nord", "Theme: nord")
        assert app.theme == "nord"
    assert json.loads(state.read_text())["theme"] == "nord"
    again = load_config(tmp_path / "none.toml", state_path=state)
    assert again.theme == "nord" and again.origin("theme").startswith("remembered")
    app = CacheTUI(config=again)
    async with app.run_test(size=NARROW) as pilot:
        assert app.theme == "nord"


async def test_palette_shows_data_as_text_never_markup(tmp_path: Path) -> None:
    name = "[bold]evil[/bold]"
    write_summary(tmp_path / "develop" / "x" / "specs.md", name, [record(fake_hash(1), os="[red]os")])
    app = CacheTUI([str(tmp_path)])
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(app, pilot)
        prompts = await palette(app, pilot, "evil", "Package: [bold]evil[/bold]")
        assert prompts[0] == f"Package: {name}"


# -- copying -----------------------------------------------------------------------------------


@contextlib.contextmanager
def written(app):
    """What the app writes to its terminal meanwhile."""
    out: list[str] = []
    real = app._driver.write
    app._driver.write = lambda data: (out.append(data), real(data))
    try:
        yield out
    finally:
        app._driver.write = real


def osc52_payloads(out: list[str]) -> list[str]:
    texts = []
    for chunk in out:
        start = chunk.find("\x1b]52;c;")
        if start >= 0:
            texts.append(base64.b64decode(chunk[start + 7 : chunk.index("\a", start)]).decode())
    return texts


async def test_y_copies_the_full_hash_by_osc52_and_shows_it(monkeypatch) -> None:
    monkeypatch.delenv("TMUX", raising=False)
    app = CacheTUI()
    async with app.run_test(size=NARROW) as pilot:
        await settle(app, pilot)
        full = app.service.index.hashes[app.screen.query_one(SpecList).highlighted_row]
        with written(app) as out:
            await pilot.press("y")
        assert osc52_payloads(out) == [full] and len(out) == 1  # outside tmux: the plain sequence only
        assert ("Copied hash", full) in notes(app)


async def test_inside_tmux_the_copy_is_also_wrapped_for_passthrough(monkeypatch) -> None:
    monkeypatch.setenv("TMUX", "/tmp/tmux-0/default,1,0")
    app = CacheTUI()
    async with app.run_test(size=NARROW) as pilot:
        await settle(app, pilot)
        with written(app) as out:
            await pilot.press("Y")
        spec = app.service.index.spec(app.screen.query_one(SpecList).highlighted_row)
        assert osc52_payloads(out) == [f"spack install /{spec.hash}"] * 2
        wrapped = next(chunk for chunk in out if chunk.startswith("\x1bPtmux;"))
        assert wrapped.endswith("\x1b\\") and "\x1b\x1b]52;c;" in wrapped


async def test_u_copies_the_tarball_url_when_known_and_says_when_not(tmp_path: Path) -> None:
    url = "https://binaries.spack.io/v0.21.0/build_cache/x.spack"
    write_summary(tmp_path / "develop" / "a" / "specs.md", "a", [record(fake_hash(1), tarball=url), record(fake_hash(2), version="2.0")])
    app = CacheTUI([str(tmp_path)])
    async with app.run_test(size=NARROW) as pilot:
        await settle(app, pilot)
        specs = app.screen.query_one(SpecList)
        specs.select_row(app.service.index.lookup_hash(fake_hash(1))[0])
        await pilot.pause()
        await pilot.press("U")
        assert app.clipboard == url
        specs.select_row(app.service.index.lookup_hash(fake_hash(2))[0])
        await pilot.pause()
        await pilot.press("U")
        assert app.clipboard == url  # unchanged
        assert any(title == "Copy" and "No tarball URL is known for a@2.0" in message for title, message in notes(app))


async def test_in_the_search_box_y_is_typed_and_escape_leaves_it() -> None:
    app = CacheTUI()
    async with app.run_test(size=NARROW) as pilot:
        await settle(app, pilot)
        await pilot.press("slash", "y", "Y", "U")
        assert app.screen.query_one("#search").value == "yYU" and app.clipboard == ""
        await pilot.press("escape")
        assert app.focused is app.screen.query_one(PackageList)
        await settle(app, pilot)
        await pilot.press("y")  # nothing matches "yYU": nothing to copy, and it says so
        assert app.clipboard == "" and ("Copy", "No spec is highlighted.") in notes(app)
        await pilot.press("slash", "backspace", "backspace", "backspace", "escape")
        await settle(app, pilot)
        await pilot.press("y")
        assert len(app.clipboard) == 32


# -- the pager ---------------------------------------------------------------------------------


async def test_v_shows_the_full_record_in_the_pager(monkeypatch) -> None:
    ran: list[tuple[str, str]] = []
    monkeypatch.setattr("cachetui.tui.screens.main_actions.run_pager", lambda command, text: ran.append((command, text)))
    app = CacheTUI(config=Config(pager="my-pager --json"))
    monkeypatch.setattr(app, "suspend", contextlib.nullcontext)  # a headless driver cannot suspend
    async with app.run_test(size=NARROW) as pilot:
        await settle(app, pilot)
        row = app.screen.query_one(SpecList).highlighted_row
        await pilot.press("v")
        assert len(ran) == 1 and ran[0][0] == "my-pager --json"
        record_ = json.loads(ran[0][1])
        spec = app.service.index.spec(row)
        assert record_["hash"] == spec.hash and record_["install"] == spec.install_command
        assert record_["stacks"] == list(spec.stacks) and record_["dependencies"] is None  # a summary lists none


async def test_a_pager_that_cannot_run_is_reported(monkeypatch) -> None:
    app = CacheTUI(config=Config(pager="no-such-pager-anywhere"))
    monkeypatch.setattr(app, "suspend", contextlib.nullcontext)
    async with app.run_test(size=NARROW) as pilot:
        await settle(app, pilot)
        await pilot.press("v")
        await pilot.pause()
        assert any(title == "Pager" and "no-such-pager-anywhere" in message and "not found" in message for title, message in notes(app))
        assert app.is_running


def test_run_pager_feeds_the_text_to_a_shell_command(tmp_path: Path) -> None:
    from cachetui.pager import run_pager

    out = tmp_path / "out"
    assert run_pager(f"cat > {out}", "héllo\n") is None
    assert out.read_text(encoding="utf-8") == "héllo\n"
    assert "not found" in run_pager("no-such-pager-anywhere", "x")


# -- config: theme, keymap, problems -----------------------------------------------------------


async def test_config_theme_and_a_bad_config_value_are_reported_by_file_and_key(tmp_path: Path) -> None:
    path = tmp_path / "config.toml"
    path.write_text('theme = "no-such-theme"\ncolor = "blue"\n')
    config = load_config(path, state_path=None)
    app = CacheTUI(config=config)
    async with app.run_test(size=NARROW) as pilot:
        await settle(app, pilot)
        assert app.theme == "textual-dark"  # the default, and the app runs
        messages = [m for t, m in notes(app) if t.startswith("Config")]
        assert any(str(path) in m and "'color'" in m and "blue" in m for m in messages), messages
        assert any(str(path) in m and "'theme'" in m and "no-such-theme" in m for m in messages), messages
        assert status(app) == SAMPLE.status()
    path.write_text('theme = "gruvbox"\n')
    app = CacheTUI(config=load_config(path, state_path=None))
    async with app.run_test(size=NARROW) as pilot:
        assert app.theme == "gruvbox"


def run_app_command(args: list[str], run_body: str, env: dict | None = None) -> subprocess.CompletedProcess:
    """`cachetui ARGS` in a fresh process, whose app, instead of running, executes `run_body`
    (with `self` and `mouse`). A spy on the CLI's own import of the app puts it there: so
    what the CLI set before that import (the colours) is what Textual saw."""
    body = "\n".join("            " + line for line in run_body.splitlines())
    probe = (
        "import os, sys, builtins\n"
        "from cachetui import cli\n"
        "assert 'textual' not in sys.modules\n"
        "real_import = builtins.__import__\n"
        "def spy(name, *a, **k):\n"
        "    module = real_import(name, *a, **k)\n"
        "    if name == 'cachetui.tui.app' and not getattr(module, '_probed', False):\n"
        "        module._probed = True\n"
        "        def run(self, mouse=True, **kw):\n"
        f"{body}\n"
        "        module.CacheTUI.run = run\n"
        "    return module\n"
        "builtins.__import__ = spy\n"
        f"sys.exit(cli.main({args!r}))\n"
    )
    return subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, env=env, timeout=60)


def run_cli(*args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "cachetui", *args], capture_output=True, text=True,
                          env={**os.environ, **(env or {})}, timeout=60)


def test_config_command_checks_what_the_app_checks(tmp_path: Path) -> None:
    path = tmp_path / "c.toml"
    path.write_text('theme = "no-such-theme"\n[keymap]\ncopy-hash = "c"\ncopy-install = "c"\n')
    done = run_cli("config", "--config", str(path), "--json")
    assert done.returncode == 2
    report = json.loads(done.stdout)
    errors = [p["error"] for p in report["problems"]]
    assert any("'theme'" in e and "no-such-theme" in e for e in errors), errors
    assert any("copy-hash" in e and "copy-install" in e for e in errors), errors  # one key, two bindings
    theme = next(row for row in report["settings"] if row["key"] == "theme")
    assert theme == {"key": "theme", "value": '"textual-dark"', "origin": "default"}  # what the app will use


def test_sources_in_the_config_that_are_missing_are_load_problems_not_a_refusal(tmp_path: Path) -> None:
    path = tmp_path / "c.toml"
    path.write_text('sources = ["/nonexistent/cache"]\n')
    done = run_app_command(["--config", str(path)], "print('app started with', self.service.sources)")
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "app started with ['/nonexistent/cache']"


def test_config_command_says_where_each_value_came_from(tmp_path: Path) -> None:
    path = tmp_path / "c.toml"
    path.write_text('sources = ["data"]\ncolor = "256"\n[keymap]\ncopy-hash = "w"\n')
    done = run_cli("config", "--config", str(path), env={"PAGER": "most"})
    assert done.returncode == 0, done.stderr
    rows = {line.split()[0]: line for line in done.stdout.splitlines()[2:]}
    assert f'"{tmp_path / "data"}"' in rows["sources"] and rows["sources"].endswith(str(path))
    assert rows["color"].split()[1:] == ['"256"', str(path)]
    assert rows["pager"].split()[1:] == ['"most"', "$PAGER"]
    assert rows["mouse"].split()[1:] == ["true", "default"]
    assert rows["keymap.copy-hash"].split()[1:] == ['"w"', str(path)]
    path.write_text('[keymap]\ncopy-hsh = "c"\n')
    done = run_cli("config", "--config", str(path), "--json")
    assert done.returncode == 2
    problems = json.loads(done.stdout)["problems"]
    assert problems[0]["source"] == str(path) and "copy-hsh" in problems[0]["error"] and "copy-hash" in problems[0]["error"]


def test_sources_from_the_config_file_are_what_the_commands_read(tmp_path: Path) -> None:
    write_summary(tmp_path / "cache" / "develop" / "z" / "specs.md", "z", [record(fake_hash(1))])
    path = tmp_path / "c.toml"
    path.write_text('sources = ["cache"]\n')
    done = run_cli("stats", "--json", "--config", str(path), "--no-cache")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["specs"] == 1
    done = run_cli("stats", "--json", "--config", str(path), "--no-cache", str(tmp_path / "cache"), str(REPO_SAMPLE))
    assert json.loads(done.stdout)["specs"] == 1 + SAMPLE.specs  # the command line wins


REPO_SAMPLE = Path(__file__).resolve().parent.parent / "sample_data"


@pytest.mark.parametrize("flag, env_seen", [
    (["--color", "256"], "TEXTUAL_COLOR_SYSTEM=256 NO_COLOR=None"),
    (["--color", "none"], "TEXTUAL_COLOR_SYSTEM=auto NO_COLOR=1"),
    (["--color", "truecolor", "--no-mouse"], "TEXTUAL_COLOR_SYSTEM=truecolor NO_COLOR=None"),
])
def test_color_is_set_before_textual_is_imported_and_no_mouse_reaches_run(flag: list[str], env_seen: str) -> None:
    # Spy on the CLI's own import of the app: by then the environment must be set.
    env = {k: v for k, v in os.environ.items() if k not in ("TEXTUAL_COLOR_SYSTEM", "NO_COLOR")}
    done = run_app_command(flag, "import textual.constants as c\n"
                                 "print(f'TEXTUAL_COLOR_SYSTEM={c.COLOR_SYSTEM} NO_COLOR={os.environ.get(\"NO_COLOR\")} mouse={mouse}')", env)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == f"{env_seen} mouse={'--no-mouse' not in flag}"


# -- colours -----------------------------------------------------------------------------------


async def test_the_default_theme_is_readablein_256_colours() -> None:
    """Over SSH, TERM=xterm-256color without COLORTERM is common: every text style of the lists
    must keep WCAG AA contrast (4.5) once its colours are reduced to the 256-colour palette."""
    from textual.color import Color

    app = CacheTUI()
    async with app.run_test(size=WIDE) as pilot:
        await settle(app, pilot)
        assert app.theme == "textual-dark"
        widget = app.screen.query_one(FacetSidebar)
        for part in ("cursor", "dim", "match", "accent", "header", "empty"):
            style = widget.rich_style + widget.get_component_rich_style(f"line-list--{part}")
            fg, bg = (in_256_colours(Color.from_rich_color(c)) for c in (style.color, style.bgcolor))
            assert contrast(fg, bg) >= 4.5, (part, fg.hex, bg.hex)
        detail = app.screen.query_one(SpecDetail)
        style = detail.rich_style + detail.get_component_rich_style("spec-detail--match")
        fg, bg = (in_256_colours(Color.from_rich_color(c)) for c in (style.color, style.bgcolor))
        assert contrast(fg, bg) >= 4.5


async def test_a_keymap_that_takes_another_bindings_key_says_so() -> None:
    app = CacheTUI(config=Config(keymap={"copy-hash": "d", "help": "?"}))  # d also shows the detail pane
    async with app.run_test(size=NARROW) as pilot:
        await settle(app, pilot)
        await pilot.press("d")
        assert len(app.clipboard) == 32 and not shown(app, "#detail")  # the keymap's binding won
        told = [m for t, m in notes(app) if t.startswith("Config")]
        assert len(told) == 1 and "copy-hash = 'd'" in told[0] and "toggle-detail (Detail)" in told[0], told


def test_ctrl_c_in_the_pager_is_the_pagers_not_the_apps() -> None:
    """The terminal sends SIGINT to the whole foreground group: the pager stops, and the app
    (here an asyncio loop, whose own handler would cancel the app) carries on."""
    script = (
        "import asyncio, os, signal, threading, time\n"
        "from cachetui.pager import run_pager\n"
        "async def main():\n"
        "    threading.Timer(0.5, lambda: os.killpg(os.getpgrp(), signal.SIGINT)).start()\n"
        "    started = time.monotonic()\n"
        "    why = run_pager('sleep 20', 'x')\n"
        "    await asyncio.sleep(0.1)\n"
        "    print('app still running', why, round(time.monotonic() - started) < 10)\n"
        "asyncio.run(main())\n"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60, start_new_session=True)
    assert done.stdout.strip() == "app still running None True", (done.stdout, done.stderr[-500:])
