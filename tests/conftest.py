"""Shared fixtures: the bundled sample data and a writer of synthetic summaries."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
SAMPLE_DATA = REPO / "sample_data"
SAMPLE_FILES = sorted(SAMPLE_DATA.rglob("specs.md"))
SHARED_SEEDS = REPO.parent / "shared" / "seeds"

_B32 = "abcdefghijklmnopqrstuvwxyz234567"


def raw_front_matter(path: Path) -> dict:
    """A summary's meta and spec_details read with plain json, independently of cachetui."""
    out = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        for key in ("meta", "spec_details"):
            if line.startswith(key + ": "):
                out[key] = json.loads(line[len(key) + 2:])
    return out


class SampleTruth:
    """Expected figures for the bundled sample data, taken from the files themselves."""

    def __init__(self) -> None:
        raw = {p.parent.name: raw_front_matter(p) for p in SAMPLE_FILES}
        self.packages = sorted(raw)
        self.specs_of = {name: len(r["spec_details"]) for name, r in raw.items()}
        assert self.specs_of == {name: r["meta"]["num_specs"] for name, r in raw.items()}
        self.specs = sum(self.specs_of.values())
        self.records = [rec for r in raw.values() for rec in r["spec_details"]]
        self.hashes = [rec["hash"] for rec in self.records]
        self.package_of = {rec["hash"]: name for name, r in raw.items() for rec in r["spec_details"]}

    def count(self, **where: str) -> int:
        return sum(all(rec[k] == v for k, v in where.items()) for rec in self.records)

    def status(self) -> str:
        return f"{len(self.packages)} of {len(self.packages)} packages · {self.specs} of {self.specs} specs"


SAMPLE = SampleTruth()


def fake_hash(n: int, prefix: str = "") -> str:
    """A valid 32-char base32 hash, distinct for each n (and starting with `prefix`)."""
    digits = []
    for _ in range(32 - len(prefix)):
        digits.append(_B32[n % 32])
        n //= 32
    return prefix + "".join(reversed(digits))


def record(digest: str, version: str = "1.0", compiler: str = "gcc@13.2.0", os: str = "ubuntu24.04",
           target: str = "x86_64_v3", platform: str = "linux", stacks=("root",), variants=("build_system=generic",), **extra) -> dict:
    return {"hash": digest, "versions": [version], "compiler": compiler, "os": os, "platform": platform,
            "target": target, "stacks": list(stacks), "variants": list(variants), "size": "-", **extra}


def write_summary(path: Path, package: str, records: list[dict], tag: str = "develop", meta: dict | None = None) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    lines = ["---", "title: " + json.dumps(package), "layout: cache", f"categories: [package, {tag}]"]
    if meta is not None:
        lines.append("meta: " + json.dumps(meta))
    lines += ["spec_details: " + json.dumps(records), "---", ""]
    path.write_text("\n".join(lines), encoding="utf-8")
    return path


CORPUS_SPECS, CORPUS_PACKAGES = 100_000, 1_000


@pytest.fixture(scope="session")
def corpus_100k(tmp_path_factory) -> Path:
    """A 100k-spec corpus shaped like the real cache (benchmarks/make_corpus.py), made once
    per session: a fresh clone has none."""
    import subprocess
    import sys

    out = tmp_path_factory.mktemp("corpus-100k")
    subprocess.run([sys.executable, str(REPO / "benchmarks" / "make_corpus.py"), str(out), "--specs", str(CORPUS_SPECS),
                    "--packages", str(CORPUS_PACKAGES)], check=True, capture_output=True)
    return out


@pytest.fixture(autouse=True)
def private_cache(tmp_path_factory, monkeypatch) -> Path:
    """Tests never read or write the user's own on-disk index, config or remembered state."""
    cache = tmp_path_factory.mktemp("xdg-cache")
    monkeypatch.setenv("XDG_CACHE_HOME", str(cache))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path_factory.mktemp("xdg-config")))
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path_factory.mktemp("xdg-state")))
    return cache / "cachetui"


@pytest.fixture
def synthetic(tmp_path: Path) -> Path:
    """Three packages with known facets, two tags, and hashes sharing prefixes on purpose."""
    root = tmp_path / "cache"
    write_summary(root / "develop" / "zlib" / "specs.md", "zlib", [
        record(fake_hash(1, "aaaa"), "1.3.1", os="ubuntu22.04", stacks=("root", "e4s")),
        record(fake_hash(2, "aaab"), "1.3.1", os="ubuntu24.04", target="aarch64", stacks=("root", "e4s", "ml")),
        record(fake_hash(3, "bbbb"), "1.2.13", compiler="gcc@=11.4.0", os="rhel8", stacks=("root",)),
    ])
    write_summary(root / "develop" / "zlib-ng" / "specs.md", "zlib-ng", [
        record(fake_hash(4, "cccc"), "2.2.1", os="ubuntu22.04", stacks=("root", "e4s")),
    ])
    write_summary(root / "develop" / "py-numpy" / "specs.md", "py-numpy", [
        record(fake_hash(5, "dddd"), "2.1.0", os="ubuntu24.04", target="aarch64", stacks=("root", "ml")),
        record(fake_hash(6, "ddde"), "2.1.0", compiler="none", os="sequoia", platform="darwin", target="aarch64", stacks=("root", "ml")),
    ])
    write_summary(root / "v1.0.0" / "zlib" / "specs.md", "zlib", [
        record(fake_hash(7, "eeee"), "1.3", os="ubuntu22.04", stacks=("root",)),
    ], tag="v1.0.0")
    return root


# -- Pilot helpers shared by the UI tests -------------------------------------------------


async def settle(app, pilot) -> None:
    """Let the load and evaluation workers finish and their messages land."""
    for _ in range(3):
        await app.workers.wait_for_complete()
        await pilot.pause()


def status(app) -> str:
    """The status line as the terminal shows it."""
    return str(app.screen.query_one("#status").render())


# -- colours: what a 256-colour terminal shows, and whether it can be read -----------------------


def in_256_colours(color):
    """A Textual Color as a 256-colour terminal shows it (Rich's own downgrade)."""
    from rich.color import Color as RichColor
    from rich.color import ColorSystem
    from textual.color import Color

    true = RichColor.from_rgb(color.r, color.g, color.b).downgrade(ColorSystem.EIGHT_BIT).get_truecolor()
    return Color(true.red, true.green, true.blue)


def contrast(a, b) -> float:
    """WCAG 2 contrast ratio of two colours (4.5 is AA for text)."""
    def luminance(c) -> float:
        def channel(v: int) -> float:
            v = v / 255
            return v / 12.92 if v <= 0.03928 else ((v + 0.055) / 1.055) ** 2.4
        return 0.2126 * channel(c.r) + 0.7152 * channel(c.g) + 0.0722 * channel(c.b)
    high, low = sorted((luminance(a), luminance(b)), reverse=True)
    return (high + 0.05) / (low + 0.05)
