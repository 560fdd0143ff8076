"""At home over SSH (issue 7), driven headless with Pilot at pinned sizes: the layout that
folds at 80 columns, help and palette from the bindings, copying by OSC 52, the pager,
the config file and its keymap, colours and the mouse. What runs without the app on
screen (the pager command, the `config` command, colours set before Textual is
imported): unit/test_session_cli.py."""

from __future__ import annotations

import base64
import contextlib
import json
from pathlib import Path

from helpers import (
    SAMPLE,
    contrast,
    fake_hash,
    in_256_colours,
    loaded_at,
    palette,
    record,
    screen_lines,
    screen_text,
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


def notes(app) -> list[tuple[str, str]]:
    """(title, message) of every notification so far."""
    return [(n.title, n.message) for n in app._notifications]


# -- layout ------------------------------------------------------------------------------------


async def test_at_80_columns_filters_and_detail_fold_away_and_come_back_with_a_key() -> None:
    app = CacheTUI()
    async with loaded_at(app, NARROW) as pilot:
        assert not shown(app, "#facets") and not shown(app, "#detail")
        assert shown(app, "#packages") and shown(app, "#specs") and status(app) == SAMPLE.status()
        await pilot.press("f")
        assert shown(app, "#facets") and app.focused is app.screen.query_one(
            FacetSidebar
        )  # shown to be used
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
        assert shown(app, "#detail") and app.service.index.hashes[row] in screen_text(app)
        await pilot.press("d")
        assert not shown(app, "#detail")


async def test_enter_on_a_spec_unfolds_the_detail_pane() -> None:
    app = CacheTUI()
    async with loaded_at(app, NARROW) as pilot:
        await pilot.press("enter", "enter")  # packages -> specs -> detail
        await settle(app, pilot)
        assert shown(app, "#detail") and app.focused is app.screen.query_one(SpecDetail)
        await pilot.press("d")  # folding the focused pane hands the focus back to the specs
        assert not shown(app, "#detail") and app.focused is app.screen.query_one(SpecList)


async def test_at_120_columns_everything_shows_and_a_resize_lays_out_again() -> None:
    app = CacheTUI()
    async with loaded_at(app, WIDE) as pilot:
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
            assert isinstance(binding, Binding) and binding.id and binding.description, (
                owner.__name__,
                binding,
            )
    ids = [entry.id for entry in key_entries(HELP_OWNERS)]
    assert len(ids) == len(set(ids))
    for wanted in (
        "toggle-filters",
        "toggle-detail",
        "copy-hash",
        "copy-install",
        "copy-url",
        "view-record",
        "clear-filters",
        "command-palette",
        "help",
    ):
        assert wanted in ids


async def test_help_follows_the_keymap_and_the_footer_names_match() -> None:
    app = CacheTUI(config=Config(keymap={"copy-hash": "w", "toggle-filters": "F"}))
    async with loaded_at(app, (120, 60)) as pilot:
        assert not [
            n for n in app._notifications if n.title.startswith("Config")
        ]  # w and F are free keys
        footer = screen_lines(app)[-1]
        assert "Copy hash" in footer and "Filters" in footer and "Help" in footer
        await pilot.press("f1")
        assert isinstance(app.screen, HelpScreen)
        lines = screen_lines(app)
        copy_line = next(line for line in lines if " copy-hash" in line)
        assert " w " in copy_line and " y " not in copy_line
        filters_line = next(line for line in lines if " toggle-filters" in line)
        assert " F " in filters_line
        assert "Copy hash" in copy_line  # the footer's and the palette's name for it
        await pilot.press("escape")
        footer = screen_lines(app)[-1]
        assert "w Copy hash" in footer and "y Copy hash" not in footer and "F Filters" in footer
        # The remapped keys do it; the old ones do not.
        await pilot.press("y")
        assert app.clipboard == ""
        await pilot.press("w")
        assert (
            app.clipboard
            == app.service.index.hashes[app.screen.query_one(SpecList).highlighted_row]
        )


async def test_help_scrolls_to_its_last_binding_at_80x24() -> None:
    app = CacheTUI()
    async with loaded_at(app, NARROW) as pilot:
        await pilot.press("question_mark")
        last = key_entries(HELP_OWNERS)[-1].id
        assert last not in screen_text(app)
        for _ in range(8):
            await pilot.press("pagedown")
        assert last in screen_text(app)


async def test_palette_goes_to_a_package_toggles_a_filter_and_clears_them() -> None:
    app = CacheTUI()
    async with loaded_at(app, NARROW) as pilot:
        await palette(app, pilot, "mpi4py", "Package: py-mpi4py")
        packages = app.screen.query_one(PackageList)
        assert app.service.index.packages[packages.highlighted_package] == "py-mpi4py"
        await palette(app, pilot, "os=ubuntu22.04", "Filter: os=ubuntu22.04")
        having = len(
            {SAMPLE.package_of[r["hash"]] for r in SAMPLE.records if r["os"] == "ubuntu22.04"}
        )
        assert status(app).startswith(
            f"{having} of 3 packages · {SAMPLE.count(os='ubuntu22.04')} of {SAMPLE.specs} specs"
        )
        await palette(app, pilot, "clear filt", "Clear filters")
        assert status(app) == SAMPLE.status()


async def test_palette_runs_the_bindings_by_their_footer_names() -> None:
    app = CacheTUI()
    async with loaded_at(app, NARROW) as pilot:
        await palette(app, pilot, "detail", "Detail")
        assert shown(app, "#detail")
        await palette(app, pilot, "copy hash", "Copy hash")
        assert (
            app.clipboard
            == app.service.index.hashes[app.screen.query_one(SpecList).highlighted_row]
        )


async def test_palette_looks_up_a_hash_and_switches_tags(synthetic: Path) -> None:
    app = CacheTUI([str(synthetic)])
    async with loaded_at(app, NARROW) as pilot:
        await palette(app, pilot, "/dddd", "Hash: /dddd")
        assert (
            app.screen.query_one(SpecList).highlighted_row
            == app.service.index.lookup_hash(fake_hash(5, "dddd"))[0]
        )
        await palette(app, pilot, "tag v1", "Tag: v1.0.0")
        assert status(app).startswith("1 of 3 packages · 1 of 7 specs")
        await palette(app, pilot, "all tags", "All tags")
        assert status(app).startswith("3 of 3 packages · 7 of 7 specs")


async def test_palette_picks_a_theme_and_it_is_remembered(tmp_path: Path) -> None:
    state = tmp_path / "state.json"
    app = CacheTUI(config=Config(state_path=state))
    async with loaded_at(app, NARROW) as pilot:
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
    write_summary(
        tmp_path / "develop" / "x" / "specs.md", name, [record(fake_hash(1), os="[red]os")]
    )
    app = CacheTUI([str(tmp_path)])
    async with loaded_at(app, (120, 40)) as pilot:
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
    async with loaded_at(app, NARROW) as pilot:
        full = app.service.index.hashes[app.screen.query_one(SpecList).highlighted_row]
        with written(app) as out:
            await pilot.press("y")
        assert (
            osc52_payloads(out) == [full] and len(out) == 1
        )  # outside tmux: the plain sequence only
        assert ("Copied hash", full) in notes(app)


async def test_inside_tmux_the_copy_is_also_wrapped_for_passthrough(monkeypatch) -> None:
    monkeypatch.setenv("TMUX", "/tmp/tmux-0/default,1,0")
    app = CacheTUI()
    async with loaded_at(app, NARROW) as pilot:
        with written(app) as out:
            await pilot.press("Y")
        spec = app.service.index.spec(app.screen.query_one(SpecList).highlighted_row)
        assert osc52_payloads(out) == [f"spack install /{spec.hash}"] * 2
        wrapped = next(chunk for chunk in out if chunk.startswith("\x1bPtmux;"))
        assert wrapped.endswith("\x1b\\") and "\x1b\x1b]52;c;" in wrapped


async def test_u_copies_the_tarball_url_when_known_and_says_when_not(tmp_path: Path) -> None:
    url = "https://binaries.spack.io/v0.21.0/build_cache/x.spack"
    write_summary(
        tmp_path / "develop" / "a" / "specs.md",
        "a",
        [record(fake_hash(1), tarball=url), record(fake_hash(2), version="2.0")],
    )
    app = CacheTUI([str(tmp_path)])
    async with loaded_at(app, NARROW) as pilot:
        specs = app.screen.query_one(SpecList)
        specs.select_row(app.service.index.lookup_hash(fake_hash(1))[0])
        await pilot.pause()
        await pilot.press("U")
        assert app.clipboard == url
        specs.select_row(app.service.index.lookup_hash(fake_hash(2))[0])
        await pilot.pause()
        await pilot.press("U")
        assert app.clipboard == url  # unchanged
        assert any(
            title == "Copy" and "No tarball URL is known for a@2.0" in message
            for title, message in notes(app)
        )


async def test_in_the_search_box_y_is_typed_and_escape_leaves_it() -> None:
    app = CacheTUI()
    async with loaded_at(app, NARROW) as pilot:
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
    monkeypatch.setattr(
        "cachetui.tui.screens.main_actions.run_pager",
        lambda command, text: ran.append((command, text)),
    )
    app = CacheTUI(config=Config(pager="my-pager --json"))
    monkeypatch.setattr(app, "suspend", contextlib.nullcontext)  # a headless driver cannot suspend
    async with loaded_at(app, NARROW) as pilot:
        row = app.screen.query_one(SpecList).highlighted_row
        await pilot.press("v")
        assert len(ran) == 1 and ran[0][0] == "my-pager --json"
        record_ = json.loads(ran[0][1])
        spec = app.service.index.spec(row)
        assert record_["hash"] == spec.hash and record_["install"] == spec.install_command
        assert (
            record_["stacks"] == list(spec.stacks) and record_["dependencies"] is None
        )  # a summary lists none


async def test_a_pager_that_cannot_run_is_reported(monkeypatch) -> None:
    app = CacheTUI(config=Config(pager="no-such-pager-anywhere"))
    monkeypatch.setattr(app, "suspend", contextlib.nullcontext)
    async with loaded_at(app, NARROW) as pilot:
        await pilot.press("v")
        await pilot.pause()
        assert any(
            title == "Pager" and "no-such-pager-anywhere" in message and "not found" in message
            for title, message in notes(app)
        )
        assert app.is_running


# -- config: theme, keymap, problems -----------------------------------------------------------


async def test_config_theme_and_a_bad_config_value_are_reported_by_file_and_key(
    tmp_path: Path,
) -> None:
    path = tmp_path / "config.toml"
    path.write_text('theme = "no-such-theme"\ncolor = "blue"\n')
    config = load_config(path, state_path=None)
    app = CacheTUI(config=config)
    async with loaded_at(app, NARROW):
        assert app.theme == "textual-dark"  # the default, and the app runs
        messages = [m for t, m in notes(app) if t.startswith("Config")]
        assert any(str(path) in m and "'color'" in m and "blue" in m for m in messages), messages
        assert any(str(path) in m and "'theme'" in m and "no-such-theme" in m for m in messages), (
            messages
        )
        assert status(app) == SAMPLE.status()
    path.write_text('theme = "gruvbox"\n')
    app = CacheTUI(config=load_config(path, state_path=None))
    async with app.run_test(size=NARROW):
        assert app.theme == "gruvbox"


# -- colours -----------------------------------------------------------------------------------


async def test_the_default_theme_is_readablein_256_colours() -> None:
    """Over SSH, TERM=xterm-256color without COLORTERM is common: every text style of the lists
    must keep WCAG AA contrast (4.5) once its colours are reduced to the 256-colour palette."""
    from textual.color import Color

    app = CacheTUI()
    async with loaded_at(app, WIDE):
        assert app.theme == "textual-dark"
        widget = app.screen.query_one(FacetSidebar)
        for part in ("cursor", "dim", "match", "accent", "header", "empty"):
            style = widget.rich_style + widget.get_component_rich_style(f"line-list--{part}")
            fg, bg = (
                in_256_colours(Color.from_rich_color(c)) for c in (style.color, style.bgcolor)
            )
            assert contrast(fg, bg) >= 4.5, (part, fg.hex, bg.hex)
        detail = app.screen.query_one(SpecDetail)
        style = detail.rich_style + detail.get_component_rich_style("spec-detail--match")
        fg, bg = (in_256_colours(Color.from_rich_color(c)) for c in (style.color, style.bgcolor))
        assert contrast(fg, bg) >= 4.5


async def test_a_keymap_that_takes_another_bindings_key_says_so() -> None:
    app = CacheTUI(
        config=Config(keymap={"copy-hash": "d", "help": "?"})
    )  # d also shows the detail pane
    async with loaded_at(app, NARROW) as pilot:
        await pilot.press("d")
        assert len(app.clipboard) == 32 and not shown(app, "#detail")  # the keymap's binding won
        told = [m for t, m in notes(app) if t.startswith("Config")]
        assert (
            len(told) == 1 and "copy-hash = 'd'" in told[0] and "toggle-detail (Detail)" in told[0]
        ), told
