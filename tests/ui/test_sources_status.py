"""With no source given, the status line says what is shown: Spack's mirrors when Spack is
configured with a binary mirror, else the sample data (`cachetui config` says it in full)."""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers import SAMPLE, SPACK_REAL, loaded_at, status

from cachetui.config import Config
from cachetui.config.sources import settle_sources
from cachetui.service import IndexService
from cachetui.tui.app import CacheTUI


def chosen_by_default() -> CacheTUI:
    config = Config()
    return CacheTUI(service=IndexService(use_cache=False, settle=lambda: settle_sources(config)))


@pytest.mark.skipif(not SPACK_REAL.exists(), reason="needs ../shared/real")
async def test_the_status_line_names_spacks_mirrors(tmp_path: Path, monkeypatch) -> None:
    user = tmp_path / "user-scope"
    user.mkdir()
    mirror = SPACK_REAL / "sources" / "v2-unsigned"
    (user / "mirrors.yaml").write_text(f"mirrors:\n  local: file://{mirror}\n")
    monkeypatch.setenv("SPACK_USER_CONFIG_PATH", str(user))
    app = chosen_by_default()
    async with loaded_at(app, (120, 30)):
        assert status(app).endswith(" specs · Spack's mirrors")
        assert not status(app).startswith(SAMPLE.status())


async def test_the_status_line_names_the_sample_data() -> None:
    app = chosen_by_default()
    async with loaded_at(app, (120, 30)):
        assert status(app) == SAMPLE.status() + " · the sample data"
