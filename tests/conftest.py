"""Fixtures for every test: a private on-disk cache and no terminal size from the
environment (both automatic), a synthetic cache, a generated corpus.

Plain helper functions and constants (fake_hash, record, write_summary, SAMPLE, settle,
status, screen_text, ...) are in tests/helpers.py: `from helpers import ...`.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from helpers import CORPUS_PACKAGES, CORPUS_SPECS, REPO, fake_hash, record, write_summary


@pytest.fixture(scope="session")
def corpus_100k(tmp_path_factory) -> Path:
    """A 100k-spec corpus shaped like the real cache (benchmarks/make_corpus.py), made once
    per session (per xdist worker that needs it): a fresh clone has none."""
    out = tmp_path_factory.mktemp("corpus-100k")
    subprocess.run(
        [
            sys.executable,
            str(REPO / "benchmarks" / "make_corpus.py"),
            str(out),
            "--specs",
            str(CORPUS_SPECS),
            "--packages",
            str(CORPUS_PACKAGES),
        ],
        check=True,
        capture_output=True,
    )
    return out


@pytest.fixture(autouse=True)
def private_cache(tmp_path_factory, monkeypatch) -> Path:
    """Tests never read or write the user's own on-disk index, config or remembered state.
    (Each test has its own directories, under its xdist worker's own base directory.)"""
    cache = tmp_path_factory.mktemp("xdg-cache")
    monkeypatch.setenv("XDG_CACHE_HOME", str(cache))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path_factory.mktemp("xdg-config")))
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path_factory.mktemp("xdg-state")))
    return cache / "cachetui"


@pytest.fixture(scope="session")
def empty_spack_scopes(tmp_path_factory) -> tuple[Path, Path]:
    """An empty user and system scope for Spack (nothing writes in them)."""
    return tmp_path_factory.mktemp("spack-user"), tmp_path_factory.mktemp("spack-system")


@pytest.fixture(autouse=True)
def no_spack_of_the_developers(empty_spack_scopes, monkeypatch) -> None:
    """Tests never see the developer's own Spack (with no SOURCE, cachetui reads Spack's
    mirrors): no `spack` on PATH, no $SPACK_ROOT, no active environment, empty user and system
    scopes. A test of Spack's mirrors sets up its own."""
    for name in ("SPACK_ROOT", "SPACK_ENV", "SPACK_DISABLE_LOCAL_CONFIG"):
        monkeypatch.delenv(name, raising=False)
    user, system = empty_spack_scopes
    monkeypatch.setenv("SPACK_USER_CONFIG_PATH", str(user))
    monkeypatch.setenv("SPACK_SYSTEM_CONFIG_PATH", str(system))
    folders = os.environ.get("PATH", "").split(os.pathsep)
    kept = [f for f in folders if not (f and os.path.exists(os.path.join(f, "spack")))]
    monkeypatch.setenv("PATH", os.pathsep.join(kept))


@pytest.fixture(autouse=True)
def no_terminal_size_in_the_environment(monkeypatch) -> None:
    """pytest-xdist's workers run with COLUMNS=80 and LINES=24 set, which a plain `pytest`
    does not. Passed on to cachetui in tmux (tests/e2e), they make it take any terminal
    for 80x24; so every test runs without them, as it does in a plain run."""
    monkeypatch.delenv("COLUMNS", raising=False)
    monkeypatch.delenv("LINES", raising=False)


@pytest.fixture
def synthetic(tmp_path: Path) -> Path:
    """Three packages with known facets, two tags, and hashes sharing prefixes on purpose."""
    root = tmp_path / "cache"
    write_summary(
        root / "develop" / "zlib" / "specs.md",
        "zlib",
        [
            record(fake_hash(1, "aaaa"), "1.3.1", os="ubuntu22.04", stacks=("root", "e4s")),
            record(
                fake_hash(2, "aaab"),
                "1.3.1",
                os="ubuntu24.04",
                target="aarch64",
                stacks=("root", "e4s", "ml"),
            ),
            record(
                fake_hash(3, "bbbb"), "1.2.13", compiler="gcc@=11.4.0", os="rhel8", stacks=("root",)
            ),
        ],
    )
    write_summary(
        root / "develop" / "zlib-ng" / "specs.md",
        "zlib-ng",
        [
            record(fake_hash(4, "cccc"), "2.2.1", os="ubuntu22.04", stacks=("root", "e4s")),
        ],
    )
    write_summary(
        root / "develop" / "py-numpy" / "specs.md",
        "py-numpy",
        [
            record(
                fake_hash(5, "dddd"),
                "2.1.0",
                os="ubuntu24.04",
                target="aarch64",
                stacks=("root", "ml"),
            ),
            record(
                fake_hash(6, "ddde"),
                "2.1.0",
                compiler="none",
                os="sequoia",
                platform="darwin",
                target="aarch64",
                stacks=("root", "ml"),
            ),
        ],
    )
    write_summary(
        root / "v1.0.0" / "zlib" / "specs.md",
        "zlib",
        [
            record(fake_hash(7, "eeee"), "1.3", os="ubuntu22.04", stacks=("root",)),
        ],
        tag="v1.0.0",
    )
    return root
