"""Dependencies in the detail pane, driven headless with Pilot at pinned terminal sizes.

The fixture mirror tests/fixtures/buildcache/db-v8 (see its expected.json): cmake links zlib
and gcc-runtime and builds with compiler-wrapper, an external gcc (/usr) and an external llvm;
zlib links gcc-runtime; gcc-runtime is used by cmake, fftpack and zlib.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from helpers import BUILDCACHE, fake_hash, loaded_at, screen_lines, screen_strips, settle

from cachetui.index import deps
from cachetui.service import IndexService
from cachetui.tui.app import CacheTUI
from cachetui.tui.widgets.dependency_list import DependencyList
from cachetui.tui.widgets.package_list import PackageList
from cachetui.tui.widgets.spec_detail import SpecDetail
from cachetui.tui.widgets.spec_list import SpecList

MIRROR = BUILDCACHE / "db-v8"
TALL = (160, 80)  # the whole of cmake's detail fits in the pane
SMALL = (100, 30)

CMAKE = "3jycfznmuf36qk367z6dlnkzy3kh5bra"
ZLIB = "qc2kbmep6ljm5ks5x27ktsazlbhki34m"
GCC_RUNTIME = "f6cqqn6yci5rsoavlhkjvozavpoxmehq"


def mirror_app(tmp_path: Path, source: Path = MIRROR) -> CacheTUI:
    return CacheTUI(service=IndexService([str(source)], cache_dir=tmp_path / "cache"))


def pane(app) -> list[str]:
    """The detail pane's lines as the terminal shows them (inside its border)."""
    return [
        line.rstrip() for line in screen_lines(app, app.screen.query_one("#detail"), content=True)
    ]


def pane_text(app) -> str:
    return "\n".join(pane(app))


def highlighted(app) -> list[str]:
    """The pane's lines drawn with the dependency cursor's background."""
    deps_list = app.screen.query_one(DependencyList)
    background = deps_list.get_component_rich_style("dependency-list--cursor").bgcolor
    region = app.screen.query_one("#detail").content_region
    strips = screen_strips(app)[region.y : region.bottom]
    return [
        strip.crop(region.x, region.right).text.strip()
        for strip in strips
        if any(
            segment.style is not None and segment.style.bgcolor == background
            for segment in strip.crop(region.x, region.right)
        )
    ]


def spec_hash(app) -> str:
    return app.service.index.hashes[app.screen.query_one(SpecList).highlighted_row]


def package(app) -> str:
    return app.service.index.packages[app.screen.query_one(PackageList).highlighted_package]


def notifications(app) -> list[str]:
    # Textual keeps no public list of notifications; toasts are not in the headless paint.
    return [n.message for n in app._notifications]


async def open_detail_of(app, pilot, hash_: str) -> None:
    """Go to a spec by its hash, as a user would, and enter its detail pane."""
    await pilot.press("slash", *f"/{hash_}", "enter")
    await settle(app, pilot)
    assert spec_hash(app) == hash_
    await pilot.press("enter")  # the spec list: enter goes to the detail
    await pilot.pause()
    assert app.focused is app.screen.query_one(SpecDetail)


def database(path: Path, specs: list[tuple[str, str, list[tuple[str, str]]]]) -> Path:
    """A small Spack database index.json: (name, hash, [(dependency name, hash), ...]) each."""
    installs = {
        digest: {
            "spec": {
                "name": name,
                "version": "1.0",
                "arch": {"platform": "linux", "platform_os": "ubuntu22.04", "target": "x86_64"},
                "dependencies": [
                    {"name": n, "hash": h, "parameters": {"deptypes": ["link"], "virtuals": []}}
                    for n, h in dependencies
                ],
                "hash": digest,
            },
            "ref_count": 0,
            "in_buildcache": True,
        }
        for name, digest, dependencies in specs
    }
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(
        json.dumps({"database": {"version": "8", "installs": installs}}), encoding="utf-8"
    )
    return path


async def test_the_detail_pane_shows_the_link_run_tree_build_dependencies_and_used_by(
    tmp_path: Path,
) -> None:
    app = mirror_app(tmp_path)
    async with loaded_at(app, TALL) as pilot:
        await open_detail_of(app, pilot, CMAKE)
        lines = pane(app)
        text = "\n".join(lines)
        assert f"spack install /{CMAKE}" in text  # the fields are still there, above
        tree, build, used_by = (
            lines.index(title)
            for title in ("depends on (link/run)", "build dependencies", "used by")
        )
        assert tree < build < used_by
        assert lines[tree + 1 : build] == [
            "  ├ gcc-runtime@10.2.1 /f6cqqn6 [link]",
            "  └ zlib@1.3.1 /qc2kbme [build,link] %zlib-api",
            "    └ gcc-runtime@10.2.1 /f6cqqn6 [link] (see above)",
        ]
        assert lines[build + 1 : used_by] == [
            "  compiler-wrapper@1.0 /mp2pcw4 [build]",
            "  gcc@10.2.1 /6al2ch3 [build] %c (external: /usr)",
            "  llvm@17.0.6 /u3icogw [build] %cxx (external: /usr/lib/llvm-17)",
        ]
        assert lines[used_by + 1] == "  (none)"
        # What uses gcc-runtime; and it links nothing.
        await open_detail_of(app, pilot, GCC_RUNTIME)
        lines = pane(app)
        tree, used_by = lines.index("depends on (link/run)"), lines.index("used by (3)")
        assert lines[tree + 1] == "  (none)"
        assert lines[used_by + 1 : used_by + 4] == [
            "  cmake@3.30.5 /3jycfzn [link]",
            "  fftpack@5.1.0 /2lr7qfx [link]",
            "  zlib@1.3.1 /qc2kbme [link]",
        ]


async def test_enter_on_a_dependency_goes_to_its_spec(tmp_path: Path) -> None:
    app = mirror_app(tmp_path)
    async with loaded_at(app, TALL) as pilot:
        await open_detail_of(app, pilot, CMAKE)
        await pilot.press("enter")  # nothing highlighted yet: enter goes nowhere
        await pilot.pause()
        assert spec_hash(app) == CMAKE and highlighted(app) == []
        await pilot.press("down", "j")
        await pilot.pause()
        assert highlighted(app) == ["└ zlib@1.3.1 /qc2kbme [build,link] %zlib-api"]
        await pilot.press("enter")
        await settle(app, pilot)
        assert spec_hash(app) == ZLIB and package(app) == "zlib"
        assert f"hash     {ZLIB}" in pane_text(app) and CMAKE not in pane_text(app)
        assert app.focused is app.screen.query_one(SpecDetail)  # the next dependency is a key away
        # ... and on from zlib to gcc-runtime, and up again with k.
        await pilot.press("j", "enter")
        await settle(app, pilot)
        assert spec_hash(app) == GCC_RUNTIME and package(app) == "gcc-runtime"
        await pilot.press(
            "down", "down", "down", "down"
        )  # past its build dependency, to cmake, fftpack, zlib
        await pilot.press("k")
        await pilot.pause()
        assert highlighted(app) == ["fftpack@5.1.0 /2lr7qfx [link]"]


async def test_enter_on_an_external_says_why_and_stays(tmp_path: Path) -> None:
    app = mirror_app(tmp_path)
    async with loaded_at(app, TALL) as pilot:
        await open_detail_of(app, pilot, CMAKE)
        await pilot.press(*["down"] * 5)  # three tree lines, compiler-wrapper, gcc
        await pilot.pause()
        assert highlighted(app) == ["gcc@10.2.1 /6al2ch3 [build] %c (external: /usr)"]
        await pilot.press("enter")
        await settle(app, pilot)
        assert (
            "gcc@10.2.1 /6al2ch3 is an external (/usr), not a binary in the loaded caches"
            in notifications(app)
        )
        assert spec_hash(app) == CMAKE and package(app) == "cmake"
        assert highlighted(app) == ["gcc@10.2.1 /6al2ch3 [build] %c (external: /usr)"]


async def test_a_click_highlights_a_dependency_and_a_header_does_nothing(tmp_path: Path) -> None:
    app = mirror_app(tmp_path)
    async with loaded_at(app, TALL) as pilot:
        await open_detail_of(app, pilot, CMAKE)
        lines = pane(app)
        deps_list = app.screen.query_one(DependencyList)
        top = (
            deps_list.region.y - app.screen.query_one("#detail").content_region.y
        )  # the pane's line of the list's first
        header = lines.index("build dependencies") - top
        await pilot.click(DependencyList, offset=(4, header))
        await pilot.pause()
        assert highlighted(app) == [] and spec_hash(app) == CMAKE
        await pilot.click(
            DependencyList, offset=(4, lines.index("  compiler-wrapper@1.0 /mp2pcw4 [build]") - top)
        )
        await pilot.pause()
        assert (
            highlighted(app) == ["compiler-wrapper@1.0 /mp2pcw4 [build]"]
            and spec_hash(app) == CMAKE
        )
        await pilot.press("enter")  # the click left the detail pane focused: enter goes
        await settle(app, pilot)
        assert package(app) == "compiler-wrapper"
        await pilot.press("enter")  # nothing highlighted in the new spec's pane
        await pilot.pause()
        assert package(app) == "compiler-wrapper"
        # A double click goes, as enter does: back to cmake, which uses compiler-wrapper.
        lines = pane(app)
        top = deps_list.region.y - app.screen.query_one("#detail").content_region.y
        await pilot.double_click(
            DependencyList, offset=(4, lines.index("  cmake@3.30.5 /3jycfzn [build]") - top)
        )
        await settle(app, pilot)
        assert spec_hash(app) == CMAKE and package(app) == "cmake"


async def test_moving_through_dependencies_keeps_the_highlighted_line_in_view(
    tmp_path: Path,
) -> None:
    specs = [("zlib", fake_hash(0), [])] + [
        (f"user{n:03}", fake_hash(n + 1), [("zlib", fake_hash(0))]) for n in range(60)
    ]
    app = mirror_app(tmp_path, database(tmp_path / "db" / "index.json", specs))
    async with loaded_at(app, SMALL) as pilot:
        await open_detail_of(app, pilot, fake_hash(0))
        assert "used by (60)" not in pane_text(app)  # below the fields, out of view
        await pilot.press("up")  # nothing highlighted, and nothing above: stays put
        await pilot.pause()
        assert highlighted(app) == [] and "used by (60)" not in pane_text(app)
        await pilot.press("down")
        await pilot.pause()
        assert highlighted(app) == [f"user000@1.0 /{fake_hash(1)[:7]} [link]"]
        assert "used by (60)" in pane(app)  # its header comes into view with it
        await pilot.press(*["j"] * 45)
        await pilot.pause()
        assert highlighted(app) == [f"user045@1.0 /{fake_hash(46)[:7]} [link]"]
        await pilot.press(*["down"] * 30)  # past the last: the pane stays at the end
        await pilot.pause()
        assert highlighted(app) == [f"user059@1.0 /{fake_hash(60)[:7]} [link]"]


async def test_a_spec_with_thousands_of_dependents_renders_only_what_is_in_view(
    tmp_path: Path, monkeypatch
) -> None:
    specs = [("zlib", fake_hash(0), [])] + [
        (f"user{n:04}", fake_hash(n + 1), [("zlib", fake_hash(0))]) for n in range(3000)
    ]
    app = mirror_app(tmp_path, database(tmp_path / "db" / "index.json", specs))
    rendered: list[int] = []
    render_line = DependencyList.render_line
    monkeypatch.setattr(
        DependencyList, "render_line", lambda self, y: rendered.append(y) or render_line(self, y)
    )
    async with loaded_at(app, SMALL) as pilot:
        await open_detail_of(app, pilot, fake_hash(0))
        assert app.screen.query_one(DependencyList).line_count == 3000 + 5
        height = app.screen.query_one("#detail").region.height
        rendered.clear()
        await pilot.press("down")  # the list comes into view
        await pilot.pause()
        assert highlighted(app) == [f"user0000@1.0 /{fake_hash(1)[:7]} [link]"]
        assert 0 < len(set(rendered)) <= height  # what is in view, never 3000 lines
        await pilot.press(*["down"] * 39)
        await pilot.pause()
        assert highlighted(app) == [f"user0039@1.0 /{fake_hash(40)[:7]} [link]"]


async def test_a_summary_source_says_it_has_no_dependency_information() -> None:
    app = CacheTUI()  # the bundled sample data: cache.spack.io summaries
    async with loaded_at(app, TALL) as pilot:
        await pilot.press("enter", "enter")  # package list, spec list, detail
        await pilot.pause()
        assert app.focused is app.screen.query_one(SpecDetail)
        before = spec_hash(app)
        await pilot.press("end")  # below the fields
        await pilot.pause()
        assert "dependencies: not in this source (a cache.spack.io summary)" in pane(app)
        assert "depends on (link/run)" not in pane_text(app)
        await pilot.press("down", "enter")  # nothing to move to or go to
        await settle(app, pilot)
        assert spec_hash(app) == before and highlighted(app) == []


async def test_a_cut_tree_says_so(tmp_path: Path, monkeypatch) -> None:
    dependencies_of = deps.dependencies_of
    monkeypatch.setattr(
        deps, "dependencies_of", lambda index, row: dependencies_of(index, row, most=2)
    )
    app = mirror_app(tmp_path)
    async with loaded_at(app, TALL) as pilot:
        await open_detail_of(app, pilot, CMAKE)
        lines = pane(app)
        tree = lines.index("depends on (link/run)")
        assert lines[tree + 1 : tree + 4] == [
            "  ├ gcc-runtime@10.2.1 /f6cqqn6 [link]",
            "  └ zlib@1.3.1 /qc2kbme [build,link] %zlib-api",
            "  (the tree is cut at 2 lines)",
        ]


@pytest.mark.parametrize("name", ["[bold]x[/]", "[@click=app.quit]y[/]"])
async def test_markup_in_a_dependency_name_is_shown_literally(tmp_path: Path, name: str) -> None:
    source = database(
        tmp_path / "db" / "index.json",
        [("app", fake_hash(1), [(name, fake_hash(2))]), (name, fake_hash(2), [])],
    )
    app = mirror_app(tmp_path, source)
    async with loaded_at(app, TALL) as pilot:
        await open_detail_of(app, pilot, fake_hash(1))
        assert f"  └ {name}@1.0 /{fake_hash(2)[:7]} [link]" in pane(app)
        await pilot.press("down", "enter")
        await settle(app, pilot)
        assert app.is_running and package(app) == name
        lines = pane(app)
        assert lines[0] == f"{name}@1.0"
        assert f"  app@1.0 /{fake_hash(1)[:7]} [link]" in lines


# -- a mirror over HTTP: the download shows in the status line ----------------------------


async def test_a_mirror_url_loads_and_its_download_shows_in_the_status_line(tmp_path):
    import functools
    import threading
    import time
    from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer

    class Slow(SimpleHTTPRequestHandler):
        def log_message(self, *args):
            pass

        def copyfile(self, source, output):  # the blob arrives in pieces, slowly
            while piece := source.read(2048):
                output.write(piece)
                output.flush()
                time.sleep(0.05)

    server = ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(Slow, directory=str(MIRROR)))
    threading.Thread(
        target=server.serve_forever, kwargs={"poll_interval": 0.01}, daemon=True
    ).start()
    seen: list[str] = []
    try:
        app = CacheTUI(
            service=IndexService(
                [f"http://127.0.0.1:{server.server_address[1]}/"], cache_dir=tmp_path / "cache"
            )
        )
        async with app.run_test(size=SMALL) as pilot:
            status = app.screen.query_one("#status")
            for _ in range(300):  # watch the status line while it loads
                seen.append(str(status.render()))
                if app.service.report is not None:
                    break
                await pilot.pause(0.02)
            await settle(app, pilot)
            assert str(status.render()).startswith("6 of 6 packages · 6 of 6 specs")
    finally:
        server.shutdown()
        server.server_close()
    assert any(" · downloading " in line and " MB" in line for line in seen), seen


def test_compiler_flags_are_listed_apart_from_variants(tmp_path):
    from cachetui.tui.widgets.spec_detail import detail_text

    index = IndexService([str(MIRROR.parent / "db-v7")], use_cache=False).load().index
    row = next(
        r for r in range(index.n_specs) if any(v.startswith("cflags=") for v in index.variants(r))
    )
    text = detail_text(index, row).plain
    variants, flags = text.split("\nvariants\n", 1)[1].split("\nflags\n", 1)
    assert "cflags='-O2 -g'" in flags and "cflags" not in variants
