"""Installed specs in the app: an install database's specs are listed apart from the
binaries, with a `kind` facet; read from ../shared/real/spack (see unit/test_spack_readers.py)."""

from __future__ import annotations

import pytest
from helpers import SPACK_REAL, loaded_at, screen_text, settle, status

from cachetui.tui.app import CacheTUI
from cachetui.tui.widgets.facet_sidebar import FacetSidebar
from cachetui.tui.widgets.spec_list import SpecList

pytestmark = pytest.mark.skipif(
    not SPACK_REAL.is_dir(), reason="../shared/real/spack is not beside the repository"
)

SOURCES = SPACK_REAL / "sources"


async def test_the_app_shows_installed_specs_apart_with_a_facet() -> None:
    app = CacheTUI([str(SOURCES / "install-db"), str(SOURCES / "v2-unsigned")])
    async with loaded_at(app, (120, 40)) as pilot:
        sidebar = app.screen.query_one(FacetSidebar)
        assert sidebar.counts["kind"] == {"binary": 6, "installed": 6}
        sidebar.focus()
        sidebar.cursor = sidebar.lines.index(("kind", "installed"))
        await pilot.press("space")
        await settle(app, pilot)
        assert status(app).endswith("· 6 of 12 specs")
        specs = app.screen.query_one(SpecList)
        specs.focus()
        await settle(app, pilot)
        painted = screen_text(app)
        assert "installed (a local install database lists it)" in str(
            app.screen.query_one("#detail-body").render()
        )
        assert painted.count(" installed") >= 2  # the list's line says so too, beside the facet


async def test_the_kind_facet_stays_out_of_the_way_when_all_are_binaries() -> None:
    app = CacheTUI([str(SOURCES / "v2-unsigned")])
    async with loaded_at(app, (120, 40)):
        sidebar = app.screen.query_one(FacetSidebar)
        assert sidebar.lines and all(facet != "kind" for facet, _ in sidebar.lines)
