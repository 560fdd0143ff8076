"""`cachetui --env ENV` in the app: the Environment filter (in environment, hits, misses)
combined with the others, and the coverage screen (E). The environment and the cache are
made from one real Spack index (tests/environments.py); zlib is in the cache built `~pic`
only, so it misses and nothing else does."""

from __future__ import annotations

from pathlib import Path

import pytest
from environments import (
    HDF5,
    by_name,
    changed,
    closure,
    real_nodes,
    with_node,
    write_cache,
    write_lockfile,
)
from helpers import SPACK_REAL, loaded_at, palette, screen_text, settle, status

from cachetui.service import IndexService
from cachetui.tui.app import CacheTUI
from cachetui.tui.screens.coverage import CoverageScreen
from cachetui.tui.screens.main import MainScreen
from cachetui.tui.widgets.coverage_list import CoverageList
from cachetui.tui.widgets.facet_sidebar import FacetSidebar
from cachetui.tui.widgets.spec_detail import SpecDetail

pytestmark = pytest.mark.skipif(not SPACK_REAL.exists(), reason="needs ../shared/real")


@pytest.fixture
def env_and_cache(tmp_path: Path) -> tuple[Path, Path, dict]:
    nodes = closure(real_nodes(), HDF5)
    zlib = by_name(nodes, "zlib")
    rebuilt = changed(nodes[zlib], lambda n: n["parameters"].update(pic=False))
    # The cache: the environment with zlib ~pic, and one package the environment lacks.
    extra = changed(
        nodes[by_name(nodes, "xz")],
        lambda n: n.update(name="lzo") or n["arch"].update(platform_os="rhel8"),
    )
    cache_nodes = {**with_node(nodes, zlib, rebuilt), extra["hash"]: extra}
    lock = write_lockfile(tmp_path / "env" / "spack.lock", nodes, [HDF5])
    cache = write_cache(tmp_path / "cache", cache_nodes)
    return lock, cache, {"nodes": nodes, "rebuilt": rebuilt["hash"]}


def app_for(lock: Path, cache: Path) -> CacheTUI:
    return CacheTUI(service=IndexService([str(cache)], use_cache=False, environment=str(lock)))


async def coverage_at(app, pilot, is_the_spec) -> CoverageList:
    """Open the coverage screen (E) with the cursor on the line of the spec `is_the_spec`
    picks."""
    await pilot.press("E")
    await settle(app, pilot)
    listing = app.screen.query_one(CoverageList)
    listing.cursor = next(
        at for at, line in enumerate(listing.lines) if is_the_spec(listing.check_of(line).spec)
    )
    return listing


async def toggle(app, pilot, facet: str, value: str) -> None:
    sidebar = app.screen.query_one(FacetSidebar)
    sidebar.cursor = sidebar.lines.index((facet, value))
    sidebar.focus()
    await pilot.press("space")
    await settle(app, pilot)


async def test_the_environment_filter_combines_with_the_others(env_and_cache) -> None:
    lock, cache, _ = env_and_cache
    app = app_for(lock, cache)
    async with loaded_at(app, (120, 40)) as pilot:
        assert status(app).startswith("21 of 21 packages · 21 of 21 specs")
        assert "env: 19 of 20 specs cached (E)" in status(app)
        sidebar = app.screen.query_one(FacetSidebar)
        assert sidebar.counts["environment"] == {"in environment": 20, "hits": 19, "misses": 1}
        assert "Environment" in screen_text(app)
        await toggle(app, pilot, "environment", "misses")
        assert status(app).startswith("1 of 21 packages · 1 of 21 specs")
        await toggle(app, pilot, "environment", "misses")
        await toggle(app, pilot, "environment", "hits")
        assert status(app).startswith("19 of 21 packages · 19 of 21 specs")
        # With another facet: the other facets' counts follow, and the two AND.
        assert sidebar.counts["os"] == {"rhel8": 0, "ubuntu20.04": 19}
        await toggle(app, pilot, "environment", "hits")
        await toggle(app, pilot, "os", "rhel8")
        assert status(app).startswith("1 of 21 packages · 1 of 21 specs")  # lzo
        assert sidebar.counts["environment"] == {"in environment": 0, "hits": 0, "misses": 0}
        await toggle(app, pilot, "environment", "in environment")
        assert status(app).startswith("0 of 21 packages")
        await toggle(app, pilot, "os", "rhel8")
        await pilot.press("slash", *"zlib")
        await settle(app, pilot)
        assert status(app).startswith("1 of 21 packages · 1 of 21 specs")  # zlib ~pic


async def test_the_coverage_screen_marks_hits_and_misses_and_goes_to_specs(
    env_and_cache,
) -> None:
    lock, cache, made = env_and_cache
    app = app_for(lock, cache)
    async with loaded_at(app, (120, 40)) as pilot:
        await coverage_at(app, pilot, lambda spec: spec.name == "zlib")
        assert isinstance(app.screen, CoverageScreen)
        text = screen_text(app)
        assert "19 of 20 specs from the cache (1 miss, 0 externals)" in text
        assert " 95%" in text and "█" in text
        assert "✗ miss /ikd3yzd ▸ zlib@1.2.11" in text
        assert "✓ hit  /vglgw4r hdf5@1.10.5  root" in text
        await pilot.press("enter")  # unfold the miss
        await settle(app, pilot)
        text = screen_text(app)
        assert f"≈ /{made['rebuilt'][:7]} zlib@1.2.11 (untagged): 1 difference" in text
        assert "≠ variant:pic: +pic vs ~pic" in text
        await pilot.press("down", "enter")  # the nearest spec: go to it
        await settle(app, pilot)
        assert isinstance(app.screen, MainScreen)
        detail = app.screen.query_one(SpecDetail)
        assert detail.row is not None
        assert app.screen.service.index.hashes[detail.row] == made["rebuilt"]


async def test_enter_on_a_hit_goes_to_that_spec(env_and_cache) -> None:
    lock, cache, _ = env_and_cache
    app = app_for(lock, cache)
    async with loaded_at(app, (80, 24)) as pilot:
        await coverage_at(app, pilot, lambda spec: spec.hash == HDF5)
        await pilot.press("enter")
        await settle(app, pilot)
        assert isinstance(app.screen, MainScreen)
        detail = app.screen.query_one(SpecDetail)
        assert app.screen.service.index.hashes[detail.row] == HDF5


async def test_the_coverage_screen_fits_80x24_without_colour(env_and_cache, monkeypatch) -> None:
    monkeypatch.setenv("NO_COLOR", "1")
    lock, cache, _ = env_and_cache
    app = app_for(lock, cache)
    async with loaded_at(app, (80, 24)) as pilot:
        await coverage_at(app, pilot, lambda spec: spec.name == "zlib")
        await pilot.press("enter")
        await settle(app, pilot)
        lines = screen_text(app).splitlines()
        assert len(lines) == 24 and all(len(line) <= 80 for line in lines)
        text = "\n".join(lines)
        # The marks are words and signs, not colour alone.
        assert "✗ miss" in text and "✓ hit" in text and "≠ variant:pic: +pic vs ~pic" in text
        assert "19 of 20 specs from the cache" in text


async def test_the_palette_opens_the_coverage_screen_and_filters_by_hits(env_and_cache) -> None:
    lock, cache, _ = env_and_cache
    app = app_for(lock, cache)
    async with loaded_at(app, (80, 24)) as pilot:
        await palette(app, pilot, "environment=misses", "Filter: environment=misses")
        assert status(app).startswith("1 of 21 packages · 1 of 21 specs")
        await palette(app, pilot, "Environment", "Environment")
        assert isinstance(app.screen, CoverageScreen)


async def test_e_without_an_environment_says_how_to_give_one() -> None:
    app = CacheTUI()
    async with loaded_at(app, (80, 24)) as pilot:
        await pilot.press("E")
        assert not isinstance(app.screen, CoverageScreen)
        assert any("--env" in n.message for n in app._notifications)


async def test_an_environment_that_cannot_be_read_is_a_load_problem(tmp_path: Path) -> None:
    bad = tmp_path / "spack.lock"
    bad.write_text("{not json")
    app = CacheTUI(service=IndexService(None, use_cache=False, environment=str(bad)))
    async with loaded_at(app, (80, 24)) as pilot:
        assert "1 load problems (p)" in status(app)
        assert str(bad) in app.screen.service.report.problems[0].source
        await pilot.press("E")
        assert any("could not be read" in n.message for n in app._notifications)


def test_the_app_takes_env_from_the_config_file_and_env_wins(
    env_and_cache, tmp_path: Path, monkeypatch
) -> None:
    from cachetui.cli import main

    lock, cache, made = env_and_cache
    seen: dict = {}

    def run(self, mouse: bool = True, **kw) -> None:  # load as the app's worker would
        self.service.load()
        seen["check"] = self.service.check

    monkeypatch.setattr(CacheTUI, "run", run)
    monkeypatch.setenv("TEXTUAL_FPS", "60")  # (run_app sets it when unset)
    config = tmp_path / "config.toml"
    config.write_text('env = "env/spack.lock"\n')  # beside the file
    assert main(["--no-cache", "--config", str(config), str(cache)]) == 0
    assert len(seen["check"].checks) == len(made["nodes"])
    one = {HDF5: made["nodes"][HDF5]}
    other = write_lockfile(tmp_path / "other" / "spack.lock", one, [HDF5])
    assert main(["--no-cache", "--config", str(config), "--env", str(other), str(cache)]) == 0
    assert [c.spec.hash for c in seen["check"].checks] == [HDF5]
