"""End to end: `cachetui --env ENV CACHE` and `cachetui check` in a real terminal (tmux), at
80x24, on an environment and a cache made from one real Spack index (tests/environments.py):
the cache holds zlib ~pic where the environment has it +pic."""

from __future__ import annotations

import subprocess
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
from helpers import INSTALLED, SPACK_REAL, Terminal

pytestmark = [
    pytest.mark.e2e,
    pytest.mark.skipif(not SPACK_REAL.exists(), reason="needs ../shared/real"),
]


@pytest.fixture
def env_and_cache(tmp_path: Path) -> tuple[Path, Path]:
    nodes = closure(real_nodes(), HDF5)
    zlib = by_name(nodes, "zlib")
    rebuilt = changed(nodes[zlib], lambda n: n["parameters"].update(pic=False))
    lock = write_lockfile(tmp_path / "env" / "spack.lock", nodes, [HDF5])
    return lock.parent, write_cache(tmp_path / "cache", with_node(nodes, zlib, rebuilt))


def test_coverage_in_the_app_at_80x24(env_and_cache, tmp_path: Path) -> None:
    env, cache = env_and_cache
    term = Terminal(80, 24, cwd=tmp_path, args=("--env", str(env), str(cache)))
    try:
        line = term.wait_for_status("20 of 20 packages · 20 of 20 specs")
        assert "env: 19 of 20 specs cached (E)" in line
        term.keys("E")
        screen = term.wait_for("19 of 20 specs from the cache")
        assert "✗ miss /ikd3yzd ▸ zlib@1.2.11" in screen and "95%" in screen
        assert screen.index("✗ miss") < screen.index("✓ hit")  # misses first
        term.keys("Enter")  # the cursor starts on the miss: unfold it
        screen = term.wait_for("≠ variant:pic: +pic vs ~pic")
        assert "≈ /" in screen and "1 difference" in screen
        term.keys("Down", "Enter")  # go to the nearest cached spec
        screen = term.wait_for("Specs of zlib")
        assert "Traceback" not in screen
        term.keys("q")
        assert term.exit_status() == 0
    finally:
        term.close()


def test_check_in_a_real_process(env_and_cache, tmp_path: Path) -> None:
    env, cache = env_and_cache
    done = subprocess.run(
        [str(INSTALLED), "check", str(env), str(cache), "--cache-dir", str(tmp_path / "c")],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 1, done.stderr
    lines = done.stdout.splitlines()
    assert lines[1].startswith("  miss      zlib@1.2.11")  # misses first
    assert "variant:pic: +pic vs ~pic" in done.stdout
    assert lines[-1].startswith("19 of 20 specs from the cache (1 miss, 0 externals)")
