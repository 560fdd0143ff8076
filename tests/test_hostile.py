"""Hostile text: data that tries to style, link, click, drive the terminal or break the layout.

Package names, versions, compilers, os/targets, variants, stacks, tags, dependency names,
virtuals, external paths and file names carry Textual/Rich markup (`[bold red]`, `[link=…]`,
`[@click=app.quit]`), terminal escapes (OSC 52 clipboard writes, ESC[2J, OSC 8 links), other
C0 and C1 controls, bidirectional overrides, and 10,000-character values. Everywhere they are
shown (every widget, the help, notifications, CLI text) they must appear literally or as
visible escapes (`\\x1b`); JSON output keeps them exact.

Each test fails when cachetui.textsafe.visible is made the identity in every module that
imports it, except the JSON test, which fails when JSON output is escaped like text.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from conftest import fake_hash, settle, status

from cachetui.spack_format import quote_if_needed

# -- the hostile classes ----------------------------------------------------------------------

# Each is wrapped in letters so that no reader's strip() can shorten it.
HOSTILE: dict[str, str] = {
    "bold": "[bold red]x[/]",
    "link": "[link=https://evil.example]x[/link]",
    "click": "[@click=app.quit]x[/]",
    "osc52": "c\x1b]52;c;ZXZpbA==\x07d",  # writes "evil" to the clipboard
    "clear": "c\x1b[2Jd",  # clears the screen
    "osc8": "c\x1b]8;;https://evil.example\x1b\\x\x1b]8;;\x1b\\d",  # a hyperlink
    "c0": "c\x07b\x08s\rd\x00e",  # bell, backspace, carriage return, NUL
    "c1": "c\x9b2J\x9d0;t\x9c\x85d",  # CSI and OSC as C1 controls, ST, NEL
    "bidi": "c\u202eevil\u202cd\u2066i\u2069",  # right-to-left override, isolates
    "long": "L" * 10_000,
    "flood": ("[b]\x1b[2J\u202e" * 1_250)[:10_000],  # 10,000 characters, most of them unsafe
}
MARKUP = ("[bold red]x[/]", "[link=https://evil.example]x[/link]", "[@click=app.quit]x[/]")

# What must never reach the terminal raw: C0 controls, DEL, C1 controls, bidi marks.
UNSAFE = re.compile("[\x00-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")


def _dir_name(key: str, value: str) -> str:
    """A file-system-safe but still hostile directory name (no '/' or NUL, at most 100 characters)."""
    return f"{key}-{value.replace('/', '|').replace(chr(0), '0')[:100]}"


# -- the data files ---------------------------------------------------------------------------

def _summary(path: Path, title: str, records: list[dict], tag: str, meta: dict | None = None) -> Path:
    """A cache.spack.io summary; `categories` as a JSON list, since a tag may hold brackets."""
    path.parent.mkdir(parents=True, exist_ok=True)
    lines = ["---", "title: " + json.dumps(title), "layout: cache", "categories: " + json.dumps(["package", tag])]
    if meta is not None:
        lines.append("meta: " + json.dumps(meta))
    lines += ["spec_details: " + json.dumps(records), "---", ""]
    path.write_text("\n".join(lines), encoding="utf-8")
    return path


# A broken summary's directory: its problems name it (markup first: a toast parsing it would show).
BAD_DIR = _dir_name("bad", HOSTILE["bold"] + HOSTILE["clear"] + HOSTILE["bidi"])
EXTERNAL = f"ext-{HOSTILE['click']}{HOSTILE['osc52']}"
COMPILER = f"cc-{HOSTILE['bold']}{HOSTILE['clear']}"
COMPILER_VERSION = f"9{HOSTILE['bidi']}"
EXTERNAL_PATH = f"/usr/{HOSTILE['osc8']}{HOSTILE['link']}{HOSTILE['c1']}"
GONE = f"gone-{HOSTILE['c1']}{HOSTILE['link']}"
VIRTUALS = ("bold", "clear", "bidi")  # the classes whose database edge names a hostile virtual
DATABASE_TAGS = ("click", "osc52", "bidi", "long")  # the tag map loads the database under each
ROOT = "d-root"


def summary_hash(n: int) -> str:
    return fake_hash(n, "hs")


def database_hash(n: int) -> str:
    return fake_hash(n, "hd")


def write_hostile_sources(root: Path) -> list[str]:
    """Hostile summaries, a hostile Spack database and a tag map labelling it; the SOURCE list."""
    summaries = root / "summaries"
    for n, (key, value) in enumerate(HOSTILE.items()):
        _summary(summaries / _dir_name(key, value) / "specs.md", f"p-{key}-{value}", [{
            "hash": summary_hash(n), "versions": [f"1.{value}"], "compiler": f"gcc@{value}",
            "os": f"os{value}", "platform": "linux", "target": f"t{value}",
            "stacks": ["root", f"s{value}"], "variants": [f"+v{value}", f"k={value}"],
            "size": 1024, "tarball": f"https://binaries.example/{value}.spack",
        }], tag=f"tag-{value}")
    # A broken summary whose problems carry hostile text: its title, its file name, and the
    # values its meta claims (named in the problem message); one record without a hash.
    bad_title = "bad " + " ".join(HOSTILE[k] for k in HOSTILE if k not in ("long", "flood"))
    _summary(summaries / BAD_DIR / "specs.md", bad_title, [
        {"versions": ["1.0"], "os": "x", "platform": "linux", "target": "x"},  # no hash: skipped
        {"hash": summary_hash(99), "versions": ["1.0"], "compiler": "gcc@13", "os": "x", "platform": "linux", "target": "x"},
    ], tag="develop", meta={"versions": [HOSTILE["clear"] + HOSTILE["bold"], HOSTILE["osc52"] + HOSTILE["bidi"]]})

    # The database: a root that links every hostile package, builds with a hostile compiler
    # (a `c` edge) and a hostile external; each hostile package is used by the root.
    installs: dict[str, dict] = {}

    def add(digest: str, name: str, version: str, arch: tuple[str, str, str], parameters: dict, dependencies: list, **extra) -> None:
        installs[digest] = {"spec": {
            "name": name, "version": version,
            "arch": {"platform": arch[0], "platform_os": arch[1], "target": arch[2]},
            "parameters": parameters,
            "dependencies": [{"name": n, "hash": h, "parameters": {"deptypes": t, "virtuals": v}} for n, h, t, v in dependencies],
            "hash": digest, **extra}, "ref_count": 0, "in_buildcache": extra.get("external") is None}

    edges = []
    for n, (key, value) in enumerate(HOSTILE.items()):
        add(database_hash(n), f"d-{key}-{value}", f"2.{value}", ("linux", f"os{value}", f"t{value}"),
            {f"v{value}": True, "k": value, "cflags": [f"-O2 {value}"]}, [])
        edges.append((f"d-{key}-{value}", database_hash(n), ["link"], [f"virt-{value}"] if key in VIRTUALS else []))
    compiler, external = database_hash(90), database_hash(91)
    add(compiler, COMPILER, COMPILER_VERSION, ("linux", "ubuntu22.04", "x86_64"), {}, [])
    add(external, EXTERNAL, "1.0", ("linux", "ubuntu22.04", "x86_64"), {}, [], external={"path": EXTERNAL_PATH, "module": None})
    edges += [(COMPILER, compiler, ["build"], ["c"]), (EXTERNAL, external, ["build"], []),
              (GONE, database_hash(92), ["run"], [])]  # no record holds it
    add(database_hash(80), ROOT, "1.0", ("linux", "ubuntu22.04", "x86_64"), {}, edges)
    db = root / "db" / "index.json"
    db.parent.mkdir(parents=True, exist_ok=True)
    db.write_text(json.dumps({"database": {"version": "8", "installs": installs}}), encoding="utf-8")

    # A tag map: the database's specs in hostile tags and stacks.
    tags = {f"dtag-{HOSTILE[k]}": [{"label": f"dstack-{HOSTILE[k]}", "url": "db/index.json"}] for k in DATABASE_TAGS}
    (root / "tags.json").write_text(json.dumps(tags), encoding="utf-8")
    return [str(summaries), str(root / "tags.json")]


# -- what the user must see ---------------------------------------------------------------------

# Each class as it must be shown: markup literally, everything unsafe as a visible escape.
# Written out by hand, so that a broken `visible` cannot agree with itself.
SHOWN: dict[str, str] = {
    "bold": "[bold red]x[/]",
    "link": "[link=https://evil.example]x[/link]",
    "click": "[@click=app.quit]x[/]",
    "osc52": r"c\x1b]52;c;ZXZpbA==\x07d",
    "clear": r"c\x1b[2Jd",
    "osc8": r"c\x1b]8;;https://evil.example\x1b\x\x1b]8;;\x1b\d",
    "c0": r"c\x07b\x08s\x0dd\x00e",
    "c1": r"c\x9b2J\x9d0;t\x9c\x85d",
    "bidi": r"c\u202eevil\u202cd\u2066i\u2069",
    "long": "L" * 10_000,
    "flood": r"[b]\x1b[2J\u202e" * 1_250,
}


def escaped(text: str) -> str:
    """`text` as the user must see it, worked out apart from cachetui.textsafe."""
    return "".join(f"\\x{ord(c):02x}" if ord(c) < 0x20 or 0x7f <= ord(c) <= 0x9f
                   else f"\\u{ord(c):04x}" if c in "\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069"
                   else c for c in text)


def shown(text: str) -> str:
    """`text` with each hostile value replaced by its shown form (longest first)."""
    for key in sorted(HOSTILE, key=lambda k: -len(HOSTILE[k])):
        text = text.replace(HOSTILE[key], SHOWN[key])
    return text


def test_each_hostile_class_is_escaped_as_written_here() -> None:
    from cachetui.textsafe import visible

    for key, value in HOSTILE.items():
        assert visible(value) == SHOWN[key] == escaped(value), key
        assert not UNSAFE.search(SHOWN[key])


# -- the app ----------------------------------------------------------------------------------

SIZE = (160, 50)
STATUS = re.compile(r"^\d+ of \d+ packages · \d+ of \d+ specs")


@pytest.fixture
def sources(tmp_path: Path) -> list[str]:
    return write_hostile_sources(tmp_path / "hostile")


def hostile_app(tmp_path: Path, sources: list[str]):
    from cachetui.service import IndexService
    from cachetui.tui.app import CacheTUI

    return CacheTUI(service=IndexService(sources, cache_dir=tmp_path / "cache"))


def lines_of(app, widget=None, content: bool = False) -> list[str]:
    """The painted lines of the screen, or of `widget`'s region of it (or its content region)."""
    strips = app.screen._compositor.render_strips()
    if widget is None:
        return [strip.text for strip in strips]
    region = widget.content_region if content else widget.region
    return [strip.crop(region.x, region.right).text for strip in strips[region.y : region.bottom]]


def assert_clean(app) -> str:
    """The screen as painted: no raw control or bidi character in any segment, no segment
    styled by markup (a link, a click action), every line as wide as the terminal. Its text."""
    width = app.size.width
    strips = app.screen._compositor.render_strips()
    for y, strip in enumerate(strips):
        assert not UNSAFE.search(strip.text), (y, strip.text)
        assert strip.cell_length == width, (y, strip.text)
        for segment in strip:
            style = segment.style
            if style is not None:
                assert not style.link, (y, segment)
                assert "@click" not in (style.meta or {}), (y, segment)
    return "\n".join(strip.text for strip in strips)


def assert_layout(app) -> None:
    """The status line still shows its counts, on one line, and the app still runs."""
    assert app.is_running
    assert STATUS.match(status(app)), status(app)
    assert app.screen.query_one("#status").region.height == 1


def in_view(app, widget) -> str:
    return "\n".join(lines_of(app, widget))


async def test_every_list_and_the_detail_pane_show_hostile_values_escaped(tmp_path: Path, sources: list[str]) -> None:
    from cachetui.tui.widgets.facet_sidebar import FacetSidebar
    from cachetui.tui.widgets.package_list import PackageList
    from cachetui.tui.widgets.spec_list import SpecList

    app = hostile_app(tmp_path, sources)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        assert_clean(app)
        assert_layout(app)
        index = app.service.index
        packages, specs = app.screen.query_one(PackageList), app.screen.query_one(SpecList)
        # The package list: every hostile name, escaped (as far as the column shows it).
        text = in_view(app, packages)
        for key in HOSTILE:
            for prefix in ("p", "d"):
                assert f" {prefix}-{key}-{SHOWN[key]}"[:30] in text, (prefix, key)
        assert " p-bold-[bold red]x[/] " in text and " d-bold-[bold red]x[/] " in text
        # Each package in turn: its specs, the specs list's title, the detail pane.
        for position, package in enumerate(packages.packages):
            name = index.packages[package]
            if not name.startswith("p-"):
                continue
            key = name.split("-")[1]
            packages.cursor = position
            await settle(app, pilot)
            screen = assert_clean(app)
            assert_layout(app)
            assert f"Specs of p-{key}-{SHOWN[key]}"[:40] in screen, key
            assert f"1.{SHOWN[key]}"[:20] in in_view(app, specs), key
            detail = str(app.screen.query_one("#detail-body").render())
            assert not UNSAFE.search(detail.replace("\n", ""))
            for field in (f"p-{key}-{SHOWN[key]}@1.{SHOWN[key]}", f"gcc@{SHOWN[key]}", f"linux-os{SHOWN[key]}-t{SHOWN[key]}",
                          f"tag-{SHOWN[key]}", f"+v{SHOWN[key]}", f"k={SHOWN[key]}", f"s{SHOWN[key]}",
                          f"https://binaries.example/{SHOWN[key]}.spack"):
                assert field in detail.replace("\n", ""), (key, field[:60])
            first = lines_of(app, app.screen.query_one("#detail"))[1]
            assert f"p-{key}-{SHOWN[key]}"[:40] in first, (key, first)
        # The facet sidebar, a page at a time: every hostile value of every facet.
        sidebar = app.screen.query_one(FacetSidebar)
        seen = ""
        for top in range(0, sidebar.count, sidebar.content_region.height - 1):
            sidebar.scroll_to(y=top, animate=False)
            await pilot.pause()
            assert_clean(app)
            seen += in_view(app, sidebar)
        for key in HOSTILE:
            for facet_prefix in ("s", "os", "t", "gcc@", "tag-", "dtag-" if key in DATABASE_TAGS else "s"):
                assert f"] {facet_prefix}{SHOWN[key]}"[:17] in seen, (key, facet_prefix)
        assert "] s[bold red]x[/] " in seen and "] os[bold red]x[/] " in seen


async def test_a_hostile_facet_value_toggles_and_its_markup_does_not_click(tmp_path: Path, sources: list[str]) -> None:
    from cachetui.tui.widgets.facet_sidebar import FacetSidebar

    app = hostile_app(tmp_path, sources)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        sidebar = app.screen.query_one(FacetSidebar)
        line = sidebar.lines.index(("stack", f"s{HOSTILE['click']}"))
        sidebar.scroll_to(y=line, animate=False)
        await pilot.pause()
        # Click on the value itself: where the `x` of a parsed [@click=app.quit]x would be.
        x, y = sidebar.content_region.x + len(" [ ] s"), sidebar.content_region.y + line - int(sidebar.scroll_offset.y)
        painted = lines_of(app)[y][x:]
        await pilot.click(offset=(x, y))
        await settle(app, pilot)
        assert app.is_running and app.screen.filter.selected == {"stack": frozenset({f"s{HOSTILE['click']}"})}
        assert painted.startswith("[@click=app.quit")  # where it was clicked: the markup, as text
        assert_clean(app)
        assert status(app).startswith("1 of 25 packages · 1 of 64 specs")


def flat(text: str) -> str:
    """Text with all white space removed: compare what a widget wraps over several lines."""
    return re.sub(r"\s", "", text)


async def click_on(app, pilot, widget, text: str) -> None:
    """Click on the first place `text` is painted inside `widget`; the app must still run."""
    lines = lines_of(app, widget)
    y = next(y for y, line in enumerate(lines) if text in line)
    await pilot.click(offset=(widget.region.x + lines[y].index(text) + 2, widget.region.y + y))
    await settle(app, pilot)
    assert app.is_running


def toasts(app) -> str:
    from textual.widgets._toast import Toast

    return "\n".join("\n".join(lines_of(app, toast, content=True)) for toast in app.screen.query(Toast))


async def highlight_dependency(pilot, dependencies, name: str) -> None:
    """Move the detail pane's cursor to the dependency line of `name` (up first, then down)."""
    for key in ("up", "down"):
        for _ in range(dependencies.line_count + 1):
            if dependencies.highlighted is not None and dependencies.highlighted.name == name:
                return
            await pilot.press(key)
    raise AssertionError(f"no dependency line for {name!r}")


async def go_to(app, pilot, digest: str) -> None:
    """Highlight the spec with this hash (its first tag) and enter the detail pane."""
    from cachetui.tui.widgets.spec_detail import SpecDetail

    app.screen.jump_to(app.service.index.lookup_hash(digest)[0])
    await settle(app, pilot)
    app.screen.query_one(SpecDetail).focus()
    await pilot.pause()


async def test_markup_in_the_lists_and_the_detail_pane_does_not_click(tmp_path: Path, sources: list[str]) -> None:
    from cachetui.tui.widgets.package_list import PackageList
    from cachetui.tui.widgets.spec_list import SpecList

    app = hostile_app(tmp_path, sources)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        # Click where the package's name has its markup: the `x` of a parsed [@click=app.quit]x.
        packages = app.screen.query_one(PackageList)
        row = [app.service.index.packages[p] for p in packages.packages].index(f"p-click-{HOSTILE['click']}")
        x, y = packages.content_region.x + len(" p-click-"), packages.content_region.y + row - int(packages.scroll_offset.y)
        painted = lines_of(app)[y][x:]
        await pilot.click(offset=(x, y))
        await settle(app, pilot)
        assert app.is_running and app.service.index.packages[packages.highlighted_package] == f"p-click-{HOSTILE['click']}"
        assert painted.startswith("[@click=app.quit]x[/]")  # where it was clicked: the markup, as text
        await click_on(app, pilot, app.screen.query_one(SpecList), "1.[@click=app.quit]")
        await click_on(app, pilot, app.screen.query_one("#detail"), "[@click=app.quit]")
        await click_on(app, pilot, app.screen.query_one(SpecList), "Specs of p-click-[@click=app.quit]")  # the title
        assert_clean(app)
        assert_layout(app)


async def test_dependencies_used_by_and_their_notices_show_hostile_names_escaped(tmp_path: Path, sources: list[str]) -> None:
    from cachetui.tui.widgets.dependency_list import DependencyList
    from cachetui.tui.widgets.spec_detail import SpecDetail

    app = hostile_app(tmp_path, sources)
    async with app.run_test(size=(160, 90), notifications=True) as pilot:
        await settle(app, pilot)
        await go_to(app, pilot, database_hash(80))
        pane = app.screen.query_one("#detail")
        screen = assert_clean(app)
        dependencies = app.screen.query_one(DependencyList)
        plain = "\n".join(dependencies.plain_lines())
        assert not UNSAFE.search(plain.replace("\n", ""))
        for n, key in enumerate(HOSTILE):
            virtual = f" %virt-{SHOWN[key]}" if key in VIRTUALS else ""
            line = f"d-{key}-{SHOWN[key]}@2.{SHOWN[key]} /{database_hash(n)[:7]} [link]{virtual}"
            assert line in plain, key
            assert line[:60] in screen, key
        for line in (f"{shown(COMPILER)}@{shown(COMPILER_VERSION)} /{database_hash(90)[:7]} [build] %c",
                     f"{shown(EXTERNAL)}@1.0 /{database_hash(91)[:7]} [build] (external: {shown(EXTERNAL_PATH)})",
                     f"{shown(GONE)} /{database_hash(92)[:7]} [run] (not in this index)"):
            assert line in plain
            assert flat(line)[:60] in flat(in_view(app, pane))
        assert f"compiler c={shown(COMPILER)}@{shown(COMPILER_VERSION)}" in str(app.screen.query_one("#detail-body").render())  # with the language its edge provides
        # Enter on the external, and on the one no record holds: a notice each, escaped.
        detail = app.screen.query_one(SpecDetail)
        for name, notice in ((EXTERNAL, f"{EXTERNAL}@1.0 /{database_hash(91)[:7]} is an external ({EXTERNAL_PATH}), not a binary in the loaded caches"),
                             (GONE, f"{GONE} /{database_hash(92)[:7]} is not in the loaded caches")):
            await highlight_dependency(pilot, dependencies, name)
            await pilot.press("enter")
            await settle(app, pilot)
            assert app.is_running and list(app._notifications)[-1].message == shown(notice)
            assert flat(shown(notice)) in flat(toasts(app))
            assert_clean(app)
        # A click on the external's line, right on its markup: highlights it, runs nothing.
        await click_on(app, pilot, dependencies, "ext-[@click=app.quit]")
        assert dependencies.highlighted.name == EXTERNAL and detail.row is not None
        # Go to a hostile dependency: its own pane lists what uses it.
        await highlight_dependency(pilot, dependencies, f"d-bold-{HOSTILE['bold']}")
        await pilot.press("enter")
        await settle(app, pilot)
        assert app.service.index.spec(detail.row).package == f"d-bold-{HOSTILE['bold']}"
        app.clear_notifications()  # the toasts cover the pane's lower lines
        await pilot.pause()
        lines = [line.rstrip(" │") for line in lines_of(app, pane)]
        assert lines[1] == "│ d-bold-[bold red]x[/]@2.[bold red]x[/]"
        assert f"│   {ROOT}@1.0 /{database_hash(80)[:7]} [link] %virt-[bold red]x[/]" in lines, "\n".join(lines)
        assert_clean(app)
        assert_layout(app)


async def test_hash_lookup_candidates_and_a_pasted_hostile_log_line(tmp_path: Path, sources: list[str]) -> None:
    from textual import events

    from cachetui.tui.screens.hash_lookup import HashLookupScreen

    app = hostile_app(tmp_path, sources)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        await pilot.press("ctrl+g", "h", "s")
        await pilot.pause()
        assert isinstance(app.screen, HashLookupScreen)
        candidates = app.screen.query_one("#candidates")
        screen = assert_clean(app)
        assert f"{len(HOSTILE) + 1} specs in {len(HOSTILE) + 1} tags have a hash starting with /hs" in screen
        text = in_view(app, candidates)
        for n, key in enumerate(HOSTILE):
            assert f" p-{key}-{SHOWN[key]}@1.{SHOWN[key]} arch="[:40] in text, key
            assert f"/{summary_hash(n)}  tag-{SHOWN[key]}"[:58] in text, key  # a long spec is cut before its hash
        await click_on(app, pilot, candidates, "[@click=app.quit]")
        # The database's specs, in hostile tags, a page at a time.
        await pilot.press("escape", "ctrl+g", "h", "d")
        await pilot.pause()
        candidates = app.screen.query_one("#candidates")
        seen = ""
        for top in range(0, candidates.count, candidates.content_region.height - 1):
            candidates.scroll_to(y=top, animate=False)
            await pilot.pause()
            assert_clean(app)
            seen += in_view(app, candidates)
        for key in HOSTILE:
            assert f" d-{key}-{SHOWN[key]}@2.{SHOWN[key]}"[:40] in seen, key
        for key in DATABASE_TAGS:
            assert f"  dtag-{SHOWN[key]}"[:25] in seen, key
        # A log line pasted from a coloured terminal: the box echoes it escaped, and finds the hash.
        prefix = app.screen.query_one("#lookup-prefix")
        prefix.value = ""
        pasted = f"\x1b[1;32m==>\x1b[0m Installing {HOSTILE['bold']} \u202ep-osc52-{summary_hash(3)}\x07"
        prefix.post_message(events.Paste(pasted))
        await pilot.pause()
        screen = assert_clean(app)
        assert r"\x1b[1;32m==>\x1b[0m Installing [bold red]x[/] \u202ep-osc52-" in screen
        assert f"1 spec has a hash starting with /{summary_hash(3)}" in screen
        await pilot.press("enter")
        await settle(app, pilot)
        assert app.service.index.hashes[app.screen.query_one("#specs").highlighted_row] == summary_hash(3)
        assert_layout(app)


async def test_the_search_box_echoes_hostile_text_escaped(tmp_path: Path, sources: list[str]) -> None:
    from textual import events

    app = hostile_app(tmp_path, sources)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        search = app.screen.query_one("#search")
        await pilot.press("slash", *"[bold red]x[/]")
        await settle(app, pilot)
        assert search.value == "[bold red]x[/]" and "[bold red]x[/]" in in_view(app, search)
        assert_clean(app)
        assert_layout(app)
        for key in ("osc52", "clear", "osc8", "c0", "c1", "bidi", "click", "flood"):
            search.value = ""
            search.post_message(events.Paste(f"p-{HOSTILE[key]}"))
            await settle(app, pilot)
            # Input takes a paste's first line (CR and NEL end one); what is searched is what is shown.
            assert search.value == escaped(f"p-{HOSTILE[key]}".splitlines()[0]), key
            echoed = lines_of(app, search, content=True)[0].strip()
            assert len(echoed) > 10 and echoed in search.value, key  # (the box shows its end)
            assert_clean(app)  # the box, its subtitle (a query error), the status line
            assert_layout(app)
        await pilot.press("enter")
        await settle(app, pilot)
        assert app.is_running


async def test_load_problems_screen_and_notice_show_hostile_text_escaped(tmp_path: Path, sources: list[str]) -> None:
    from cachetui.tui.screens.problems import ProblemsScreen

    app = hostile_app(tmp_path, sources)
    async with app.run_test(size=SIZE, notifications=True) as pilot:
        await settle(app, pilot)
        bad_dir = escaped(BAD_DIR)
        assert flat(f"{bad_dir}/specs.md: spec_details record 1 skipped") in flat(toasts(app))
        assert_clean(app)
        assert status(app).endswith("· 2 load problems (p)")
        app.clear_notifications()  # the toast would cover the problem's detail
        await pilot.press("p")
        await pilot.pause()
        assert isinstance(app.screen, ProblemsScreen)
        screen = assert_clean(app)
        assert screen.count(f"/summaries/{bad_dir[:30]}") == 3  # two rows (cut, the path first), and the detail
        meta = f"meta versions lists {SHOWN['clear']}{SHOWN['bold']}, {SHOWN['osc52']}{SHOWN['bidi']} not in spec_details"
        await pilot.press("down")
        await pilot.pause()
        assert flat(meta) in flat(in_view(app, app.screen.query_one("#problem-detail")))
        assert_clean(app)
        await click_on(app, pilot, app.screen.query_one("#problem-detail"), "[bold red]")
        await pilot.press("escape")
        assert not isinstance(app.screen, ProblemsScreen)


async def test_the_help_screen_over_hostile_data(tmp_path: Path, sources: list[str]) -> None:
    from cachetui.tui.screens.help import HelpScreen

    app = hostile_app(tmp_path, sources)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        await pilot.press("question_mark")
        await pilot.pause()
        assert isinstance(app.screen, HelpScreen)
        screen = assert_clean(app)
        assert "cachetui keys" in screen and "go-to-hash" in screen
        await pilot.press("escape")
        assert_clean(app)
        assert_layout(app)


@pytest.mark.parametrize("size", [SIZE, (80, 24)])
async def test_ten_thousand_character_values_keep_the_layout(tmp_path: Path, sources: list[str], size: tuple[int, int]) -> None:
    app = hostile_app(tmp_path, sources)
    async with app.run_test(size=size) as pilot:
        await settle(app, pilot)
        if size[0] < 120:  # narrow: the filters and the detail pane are folded; bring them back
            await pilot.press("f", "d")
        keys = list(HOSTILE)
        for digest in (summary_hash(keys.index("long")), summary_hash(keys.index("flood")),
                       database_hash(keys.index("long")), database_hash(keys.index("flood"))):
            await go_to(app, pilot, digest)
            assert_clean(app)  # every painted line exactly as wide as the terminal
            assert_layout(app)
            for pane in ("#facets", "#packages", "#specs", "#detail"):
                box = lines_of(app, app.screen.query_one(pane))
                assert box[0].startswith("╭") and box[-1].startswith("╰"), pane
            assert app.screen.query_one("#specs").highlighted_row is not None
            app.screen.query_one("#detail").scroll_end(animate=False)  # (the end key animates: a second)
            await pilot.pause()
            assert_clean(app)
        await pilot.press("ctrl+g")
        app.screen.query_one("#lookup-prefix").value = summary_hash(keys.index("long"))
        await pilot.pause()
        line = lines_of(app, app.screen.query_one("#candidates"))[0]
        assert f"/{summary_hash(keys.index('long'))}" in line and "LLL" in line  # the hash kept, the spec cut
        assert_clean(app)


# -- the command line ---------------------------------------------------------------------------


def run(capsys, *argv: str) -> tuple[int, str, str]:
    from cachetui.cli import main

    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def assert_safe_text(text: str) -> None:
    """Text for a terminal: no raw control (but the line ends) or bidi character."""
    for line in text.split("\n"):
        assert not UNSAFE.search(line), line[:300]


def test_cli_text_outputs_show_hostile_values_escaped(capsys, sources: list[str]) -> None:
    common = (*sources, "--no-cache")
    bad_dir = escaped(BAD_DIR)
    code, out, err = run(capsys, "stats", *common)
    assert code == 0
    assert_safe_text(out)
    assert_safe_text(err)
    for key in HOSTILE:
        for value in (f"s{SHOWN[key]}", f"os{SHOWN[key]}", f"t{SHOWN[key]}", f"gcc@{SHOWN[key]}", f"tag-{SHOWN[key]}"):
            assert f"\n{value} " in out, value[:60]
    assert f"/summaries/{bad_dir}/specs.md: spec_details record 1 skipped" in err
    assert f"meta versions lists {SHOWN['clear']}{SHOWN['bold']}, {SHOWN['osc52']}{SHOWN['bidi']} not in spec_details" in err

    for n, key in enumerate(HOSTILE):  # one spec: every field
        code, out, err = run(capsys, "lookup", summary_hash(n), *common)
        assert code == 0
        assert_safe_text(out)
        for field in (f"p-{key}-{SHOWN[key]}@1.{SHOWN[key]}", f"gcc@{SHOWN[key]}", f"linux-os{SHOWN[key]}-t{SHOWN[key]}",
                      f"+v{SHOWN[key]} k={SHOWN[key]}", f"root, s{SHOWN[key]}", f"tag-{SHOWN[key]}",
                      f"https://binaries.example/{SHOWN[key]}.spack", f"/summaries/{escaped(_dir_name(key, HOSTILE[key]))[:40]}"):
            assert field in out, (key, field[:60])

    for argv in (("lookup", "hs"), ("search", "/hs"), ("search", "/hd")):  # tables
        code, out, err = run(capsys, *argv, *common, "--limit", "0") if argv[0] == "search" else run(capsys, *argv, *common)
        assert code == 0
        assert_safe_text(out)
        prefix = argv[1][-2:]
        for n, key in enumerate(HOSTILE):
            digest, package = (summary_hash(n), f"p-{key}-{SHOWN[key]}@1.") if prefix == "hs" else (database_hash(n), f"d-{key}-{SHOWN[key]}@2.")
            assert f"{digest}  {package}{SHOWN[key]}" in out, (argv, key)

    code, out, err = run(capsys, "deps", database_hash(80), *common)
    assert code == 0
    assert_safe_text(out)
    for n, key in enumerate(HOSTILE):
        virtual = f" %virt-{SHOWN[key]}" if key in VIRTUALS else ""
        assert f"  d-{key}-{SHOWN[key]}@2.{SHOWN[key]} /{database_hash(n)[:7]} [link]{virtual}\n" in out, key
    assert f"  {shown(COMPILER)}@{shown(COMPILER_VERSION)} /{database_hash(90)[:7]} [build] %c\n" in out
    assert f"  {shown(EXTERNAL)}@1.0 /{database_hash(91)[:7]} [build] (external)\n" in out
    assert f"  {shown(GONE)} /{database_hash(92)[:7]} [run] (not in this index)\n" in out
    code, out, err = run(capsys, "deps", database_hash(0), *common, "--reverse")
    assert code == 0 and f"d-bold-{SHOWN['bold']}@2.{SHOWN['bold']}" in out and f"  {ROOT}@1.0 /{database_hash(80)[:7]} [link] %virt-[bold red]x[/]" in out
    assert_safe_text(out)

    # Hostile arguments are echoed escaped too.
    for argv in (("search", f"p-{HOSTILE['clear']}{HOSTILE['bidi']}"), ("search", f"zzz{HOSTILE['osc52']}"),
                 ("lookup", f"{HOSTILE['osc8']}"), ("deps", f"{HOSTILE['c1']}")):
        code, out, err = run(capsys, *argv, *common)
        assert code in (1, 2) and err
        assert_safe_text(out)
        assert_safe_text(err)


def test_cli_csv_cells_are_escaped(capsys, sources: list[str]) -> None:
    import csv
    import io

    code, out, err = run(capsys, "search", "/hs", *sources, "--no-cache", "--csv")
    assert code == 0
    assert_safe_text(out)
    rows = {row["hash"]: row for row in csv.DictReader(io.StringIO(out))}
    for n, (key, value) in enumerate(HOSTILE.items()):
        row = rows[summary_hash(n)]
        assert row["package"] == SHOWN[key].join(("p-" + key + "-", "")) == escaped(f"p-{key}-{value}")
        assert (row["version"], row["compiler"], row["os"], row["target"], row["tag"]) == (
            escaped(f"1.{value}"), escaped(f"gcc@{value}"), escaped(f"os{value}"), escaped(f"t{value}"), escaped(f"tag-{value}"))
        assert row["variants"] == escaped(f"+v{value} k={value}") and row["stacks"] == escaped(f"root s{value}")
        assert row["tarball"] == escaped(f"https://binaries.example/{value}.spack")


def test_cli_json_keeps_the_data_exact(capsys, sources: list[str]) -> None:
    common = (*sources, "--no-cache")

    def decoded(*argv: str, options: tuple[str, ...] = ()):
        code, out, err = run(capsys, *argv, *common, "--json", *options)
        assert code == 0
        assert_safe_text(out)  # C0 controls escaped by JSON itself, C1 and bidi as \\u escapes
        return json.loads(out)

    specs = {spec["hash"]: spec for spec in decoded("lookup", "hs")["specs"]}
    for n, (key, value) in enumerate(HOSTILE.items()):
        spec = specs[summary_hash(n)]
        assert (spec["package"], spec["version"], spec["compiler"], spec["os"], spec["target"], spec["tag"]) == (
            f"p-{key}-{value}", f"1.{value}", f"gcc@{value}", f"os{value}", f"t{value}", f"tag-{value}"), key
        assert spec["variants"] == [f"+v{value}", f"k={value}"] and spec["stacks"] == ["root", f"s{value}"]
        assert spec["tarball"] == f"https://binaries.example/{value}.spack"
        assert spec["source"].endswith(f"/{_dir_name(key, value)}/specs.md")

    found = decoded("search", "/hd", options=("--limit", "0"))
    assert {p["name"] for p in found["packages"]} == {f"d-{k}-{v}" for k, v in HOSTILE.items()} | {ROOT, COMPILER}
    for spec in found["specs"]:
        if spec["package"].startswith("d-") and spec["package"] != ROOT:
            value = HOSTILE[spec["package"].split("-")[1]]
            assert (spec["version"], spec["os"], spec["target"]) == (f"2.{value}", f"os{value}", f"t{value}")
            # (a value with characters Spack quotes is written quoted, as Spack prints it)
            assert f"+v{value}" in spec["variants"] and f"k={quote_if_needed(value)}" in spec["variants"]
            assert spec["tag"] in {f"dtag-{HOSTILE[k]}" for k in DATABASE_TAGS} and spec["stacks"] == ["d" + spec["tag"][1:].replace("tag-", "stack-", 1)]
    assert {s["compiler"] for s in found["specs"] if s["package"] == ROOT} == {f"{COMPILER}@{COMPILER_VERSION}"}

    record = decoded("deps", database_hash(80))
    names = {(d["name"], tuple(d["virtuals"]), d["kind"]) for d in record["dependencies"] + record["build"]}
    assert names == {(f"d-{k}-{v}", (f"virt-{v}",) if k in VIRTUALS else (), "binary") for k, v in HOSTILE.items()} | {
        (COMPILER, ("c",), "binary"), (EXTERNAL, (), "external"), (GONE, (), "not in this index")}
    assert {d["version"] for d in record["dependencies"] if d["name"].startswith("d-")} == {f"2.{v}" for v in HOSTILE.values()}

    stats = decoded("stats")
    for key, value in HOSTILE.items():
        assert stats["facets"]["stack"][f"s{value}"] == 1 and stats["tags"][f"tag-{value}"] == 1
        assert stats["facets"]["compiler"][f"gcc@{value}"] == 1
    bad_dir = BAD_DIR
    assert {(p["source"].rsplit("/summaries/", 1)[-1], p["error"]) for p in stats["problems"]} == {
        (f"{bad_dir}/specs.md", "spec_details record 1 skipped: missing 'hash'"),
        (f"{bad_dir}/specs.md", f"meta versions lists {HOSTILE['clear']}{HOSTILE['bold']}, {HOSTILE['osc52']}{HOSTILE['bidi']} not in spec_details and omits 1.0; using spec_details")}
