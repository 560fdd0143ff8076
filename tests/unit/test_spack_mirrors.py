"""Your Spack's mirrors as a source (issue 20): the binary mirrors Spack is configured with, read
from its configuration files as Spack reads them, and the source `spack` and the default that
use them.

Every test builds its own Spack (tests/conftest.py hides the developer's): an instance
(`bin/spack` and `etc/spack/`) in one of Spack's layouts, a user scope, an environment. What
each layout's scopes are, in what order, is checked against Spack's own `spack mirror list`
in the notes of cachetui/sources/spack_config.py."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest
from helpers import SAMPLE, SAMPLE_DATA, SPACK_REAL

from cachetui.cli import main
from cachetui.sources.spack_config import spack_mirrors

PLATFORM = {"win32": "windows"}.get(sys.platform, sys.platform)
SPACK_PUBLIC = "mirrors:\n  spack-public:\n    binary: false\n    url: https://mirror.spack.io\n"
REAL_MIRROR = SPACK_REAL / "sources" / "v2-unsigned"  # a v2 mirror of 6 specs


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def spack_instance(root: Path, layout: str = "1.0") -> Path:
    """A Spack instance's bin/spack and etc/spack, holding only its default source mirror.
    "0.23": defaults/mirrors.yaml; site, user and each platform's subdirectory hard-coded.
    "1.0": defaults/include.yaml brings in `base` and the platform's directory.
    "1.2": etc/spack/include.yaml too, which brings in the user, site and system scopes."""
    spack = write(root / "bin" / "spack", "#!/bin/sh\necho 'not run by cachetui' >&2; exit 1\n")
    spack.chmod(0o755)
    etc = root / "etc" / "spack"
    if layout == "0.23":
        write(etc / "defaults" / "mirrors.yaml", SPACK_PUBLIC)
        return root
    write(etc / "defaults" / "base" / "mirrors.yaml", SPACK_PUBLIC)
    write(
        etc / "defaults" / "include.yaml",
        'include:\n- path: "${platform}"\n  optional: true\n- path: base\n',
    )
    if layout == "1.2":
        local = "when: '\"SPACK_DISABLE_LOCAL_CONFIG\" not in env'"
        write(
            etc / "include.yaml",
            "include:\n"
            f"- {{name: user, path_override_env_var: SPACK_USER_CONFIG_PATH, path: ~/.spack, "
            f"optional: true, {local}}}\n"
            "- {name: site, path: $spack/etc/spack/site, optional: true}\n"
            "- {name: system, path_override_env_var: SPACK_SYSTEM_CONFIG_PATH, path: /etc/spack, "
            f"optional: true, {local}}}\n",
        )
    return root


@pytest.fixture
def spack(tmp_path: Path, monkeypatch) -> Path:
    """A Spack 1.0 instance on PATH, and an empty user scope: the files are the test's."""
    root = spack_instance(tmp_path / "spack")
    monkeypatch.setenv("PATH", f"{root / 'bin'}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setenv("SPACK_USER_CONFIG_PATH", str(tmp_path / "user"))
    return root


def named(found) -> list[tuple[str, str]]:
    return [(m.name, m.url) for m in found.mirrors]


# -- Spack's configuration ---------------------------------------------------------------------


def test_a_spack_as_it_comes_has_no_binary_mirror(spack: Path) -> None:
    found = spack_mirrors()
    assert found.mirrors == [] and found.problems == [] and found.root == str(spack)
    assert str(spack / "etc/spack/defaults/base/mirrors.yaml") in found.looked_in


def test_scopes_in_spack_order_the_highest_first(spack: Path, tmp_path: Path, monkeypatch) -> None:
    site = write(
        spack / "etc/spack/mirrors.yaml",
        "mirrors:\n  site-m: https://site.example/m\n  shared: https://site.example/shared\n",
    )
    user = write(
        tmp_path / "user/mirrors.yaml",
        "mirrors:\n  user-m: https://user.example/m\n  shared: https://user.example/shared\n",
    )
    system = write(tmp_path / "system/mirrors.yaml", "mirrors:\n  sys-m: https://sys.example/\n")
    env = write(
        tmp_path / "env/spack.yaml", "spack:\n  mirrors:\n    env-m: https://env.example/\n"
    )
    monkeypatch.setenv("SPACK_SYSTEM_CONFIG_PATH", str(system.parent))
    monkeypatch.setenv("SPACK_ENV", str(env.parent))
    found = spack_mirrors()
    assert named(found) == [
        ("env-m", "https://env.example/"),
        ("user-m", "https://user.example/m"),
        ("shared", "https://user.example/shared"),
        ("site-m", "https://site.example/m"),
        ("sys-m", "https://sys.example/"),
    ]
    assert found.files == [str(env), str(user), str(site), str(system)]


def test_spack_1_1_on_puts_its_own_etc_spack_above_the_user_and_site_in_its_own_directory(
    tmp_path: Path, monkeypatch
) -> None:
    root = spack_instance(tmp_path / "spack", "1.2")
    monkeypatch.setenv("SPACK_ROOT", str(root))  # not on PATH: $SPACK_ROOT
    monkeypatch.setenv("SPACK_USER_CONFIG_PATH", str(tmp_path / "user"))
    write(root / "etc/spack/mirrors.yaml", "mirrors:\n  a: https://instance.example/a\n")
    write(root / "etc/spack/site/mirrors.yaml", "mirrors:\n  c: https://site.example/c\n")
    write(
        tmp_path / "user/mirrors.yaml",
        "mirrors:\n  a: https://user.example/a\n  b: https://user.example/b\n",
    )
    assert named(spack_mirrors()) == [
        ("a", "https://instance.example/a"),
        ("b", "https://user.example/b"),
        ("c", "https://site.example/c"),
    ]
    monkeypatch.setenv("SPACK_DISABLE_LOCAL_CONFIG", "")  # set, even empty: no user scope
    assert [m.name for m in spack_mirrors().mirrors] == ["a", "c"]


def test_before_spack_1_0_each_scope_has_its_platforms_directory_above_it(
    tmp_path: Path, monkeypatch
) -> None:
    root = spack_instance(tmp_path / "spack", "0.23")
    monkeypatch.setenv("PATH", str(root / "bin"))
    write(root / "etc/spack/mirrors.yaml", "mirrors:\n  m: https://site.example/\n")
    write(root / f"etc/spack/{PLATFORM}/mirrors.yaml", "mirrors:\n  m: https://platform.example/\n")
    assert named(spack_mirrors()) == [("m", "https://platform.example/")]
    assert str(root / "etc/spack/defaults/mirrors.yaml") in spack_mirrors().looked_in


def test_double_colon_discards_what_lower_scopes_say(spack: Path, tmp_path: Path) -> None:
    write(
        spack / "etc/spack/mirrors.yaml",
        "mirrors:\n  site-m: https://site.example/\n"
        "  m:\n    url: https://site.example/m\n    binary: false\n",
    )
    user = write(
        tmp_path / "user/mirrors.yaml", "mirrors:\n  m:\n    url: https://user.example/m\n"
    )
    # merged with the site's entry: still source-only
    assert named(spack_mirrors()) == [("site-m", "https://site.example/")]
    user.write_text("mirrors:\n  m::\n    url: https://user.example/m\n")  # this entry only
    assert named(spack_mirrors()) == [
        ("m", "https://user.example/m"),
        ("site-m", "https://site.example/"),
    ]
    user.write_text("mirrors::\n  u: https://user.example/u\n")  # this scope's mirrors only
    assert named(spack_mirrors()) == [("u", "https://user.example/u")]


def test_entries_binary_only_and_their_fetch_url(spack: Path, tmp_path: Path) -> None:
    write(
        tmp_path / "user/mirrors.yaml",
        "mirrors:\n"
        "  plain: https://a.example/\n"
        "  with-url: {url: https://b.example/}\n"
        "  fetch-string: {url: https://push.example/, fetch: https://c.example/}\n"
        "  fetch-dict: {url: https://push.example/, fetch: {url: https://d.example/}, push: {url: https://p.example/}}\n"
        "  source-only: {url: https://e.example/, binary: false}\n"
        "  binary-only: {url: https://f.example/, source: false}\n",
    )
    assert named(spack_mirrors()) == [
        ("plain", "https://a.example/"),
        ("with-url", "https://b.example/"),
        ("fetch-string", "https://c.example/"),
        ("fetch-dict", "https://d.example/"),
        ("binary-only", "https://f.example/"),
    ]


def test_paths_become_file_urls_with_spacks_variables_and_the_environments(
    spack: Path, tmp_path: Path, monkeypatch
) -> None:
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("MIRRORS", str(tmp_path / "mirrors"))
    write(
        tmp_path / "user/mirrors.yaml",
        "mirrors:\n"
        "  relative: ../here\n"
        "  instance: $spack/mirror\n"
        "  braces: ${SPACK}/mirror2\n"
        "  home: ~/m\n"
        "  variable: $MIRRORS/m\n"
        "  as-written: file:///srv/mirror\n",
    )
    env = write(tmp_path / "env/spack.yaml", "spack:\n  mirrors:\n    in-env: $env/m\n")
    monkeypatch.setenv("SPACK_ENV", str(env.parent))
    assert named(spack_mirrors()) == [
        ("in-env", (tmp_path / "env/m").as_uri()),
        ("relative", (tmp_path / "here").as_uri()),
        ("instance", (spack / "mirror").as_uri()),
        ("braces", (spack / "mirror2").as_uri()),
        ("home", (tmp_path / "home/m").as_uri()),
        ("variable", (tmp_path / "mirrors/m").as_uri()),
        ("as-written", "file:///srv/mirror"),
    ]


def test_an_environments_includes_are_read_below_it(
    spack: Path, tmp_path: Path, monkeypatch
) -> None:
    env = write(
        tmp_path / "env/spack.yaml",
        "spack:\n  include: [more.yaml]\n  mirrors:\n    m: https://env.example/\n",
    )
    write(tmp_path / "env/more.yaml", "mirrors:\n  m: https://x.example/\n  n: ./n\n")
    monkeypatch.setenv("SPACK_ENV", str(env.parent))
    assert named(spack_mirrors()) == [
        ("m", "https://env.example/"),
        ("n", (tmp_path / "env/n").as_uri()),
    ]


def test_a_broken_file_is_named_and_the_others_still_read(spack: Path, tmp_path: Path) -> None:
    write(spack / "etc/spack/mirrors.yaml", "mirrors:\n  site-m: https://site.example/\n")
    broken = write(tmp_path / "user/mirrors.yaml", "mirrors:\n  m: [https://user.example/\n")
    found = spack_mirrors()
    assert named(found) == [("site-m", "https://site.example/")]
    [problem] = found.problems
    assert problem.source == str(broken) and problem.message.startswith("not valid YAML (line ")


def test_what_spack_knows_but_cachetui_cannot_read_is_said_and_skipped(
    spack: Path, tmp_path: Path, monkeypatch
) -> None:
    user = write(
        tmp_path / "user/mirrors.yaml",
        "mirrors:\n  oci: oci://ghcr.io/me/cache\n  ok: s3://spack-binaries/develop\n"
        "  bad: {binary: true}\n",
    )
    monkeypatch.setenv("SPACK_ENV", str(tmp_path / "no-env"))
    found = spack_mirrors()
    assert named(found) == [("ok", "s3://spack-binaries/develop")]
    said = {(p.source, p.message) for p in found.problems}
    assert said == {
        (str(user), "mirror 'oci': cachetui cannot read oci:// mirrors; skipped"),
        (str(user), "mirror 'bad' has no URL; skipped"),
        (str(tmp_path / "no-env"), "$SPACK_ENV names no environment here (no spack.yaml)"),
    }


def test_disable_local_config_drops_the_system_and_user_scopes(
    spack: Path, tmp_path: Path, monkeypatch
) -> None:
    write(spack / "etc/spack/mirrors.yaml", "mirrors:\n  site-m: https://site.example/\n")
    write(tmp_path / "user/mirrors.yaml", "mirrors:\n  user-m: https://user.example/\n")
    write(tmp_path / "system/mirrors.yaml", "mirrors:\n  sys-m: https://sys.example/\n")
    monkeypatch.setenv("SPACK_SYSTEM_CONFIG_PATH", str(tmp_path / "system"))
    assert [m.name for m in spack_mirrors().mirrors] == ["user-m", "site-m", "sys-m"]
    monkeypatch.setenv("SPACK_DISABLE_LOCAL_CONFIG", "1")
    assert [m.name for m in spack_mirrors().mirrors] == ["site-m"]


def test_spack_on_path_is_found_through_a_symlink_and_before_spack_root(
    tmp_path: Path, monkeypatch
) -> None:
    used = spack_instance(tmp_path / "used")
    write(used / "etc/spack/mirrors.yaml", "mirrors:\n  m: https://used.example/\n")
    other = spack_instance(tmp_path / "other")
    write(other / "etc/spack/mirrors.yaml", "mirrors:\n  m: https://other.example/\n")
    (tmp_path / "bin").mkdir()
    (tmp_path / "bin/spack").symlink_to(used / "bin/spack")
    monkeypatch.setenv("PATH", str(tmp_path / "bin"))
    monkeypatch.setenv("SPACK_ROOT", str(other))
    assert named(spack_mirrors()) == [("m", "https://used.example/")]
    monkeypatch.setenv("PATH", "")
    assert named(spack_mirrors()) == [("m", "https://other.example/")]


# -- the source `spack`, and the default -------------------------------------------------------


def run(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def settings(out: str) -> dict[str, dict]:
    return {row["key"]: row for row in json.loads(out)["settings"]}


needs_shared = pytest.mark.skipif(not REAL_MIRROR.is_dir(), reason="needs ../shared/real/spack")


@pytest.fixture
def spack_with_a_mirror(spack: Path, tmp_path: Path) -> Path:
    """A user scope whose one binary mirror is a real v2 mirror, as a file:// URL."""
    return write(tmp_path / "user/mirrors.yaml", f"mirrors:\n  local: {REAL_MIRROR.as_uri()}\n")


@needs_shared
def test_stats_spack_reads_spacks_mirrors_and_so_does_stats_alone(
    spack_with_a_mirror: Path, capsys, tmp_path: Path
) -> None:
    code, out, err = run(capsys, "stats", "--json", "--no-cache", str(REAL_MIRROR))
    direct = json.loads(out)["specs"]
    assert code == 0 and direct > 0 and direct != SAMPLE.specs
    for argv in (["spack"], []):
        code, out, err = run(capsys, "stats", "--json", "--no-cache", *argv)
        assert (code, json.loads(out)["specs"], err) == (0, direct, "")


@needs_shared
def test_config_says_the_sources_are_spacks_mirrors(spack_with_a_mirror: Path, capsys) -> None:
    code, out, err = run(capsys, "config", "--json")
    assert code == 0, err
    assert settings(out)["sources"] == {
        "key": "sources",
        "value": json.dumps([REAL_MIRROR.as_uri()]),
        "origin": f"Spack's mirrors ({spack_with_a_mirror})",
    }
    code, out, err = run(capsys, "config")
    [row] = [line for line in out.splitlines() if line.startswith("sources ")]
    assert row.split(None, 2)[1:] == [
        json.dumps([REAL_MIRROR.as_uri()]),
        f"Spack's mirrors ({spack_with_a_mirror})",
    ]


def test_with_no_spack_mirror_the_sample_data_and_config_says_so(spack: Path, capsys) -> None:
    code, out, err = run(capsys, "stats", "--json", "--no-cache")
    assert (code, json.loads(out)["specs"]) == (0, SAMPLE.specs)
    code, out, err = run(capsys, "config", "--json")
    assert settings(out)["sources"]["origin"] == "default (the bundled sample data)"
    code, out, err = run(capsys, "config")
    assert "default (the bundled sample data)" in next(
        line for line in out.splitlines() if line.startswith("sources ")
    )


def test_spack_with_no_binary_mirror_says_where_it_looked(spack: Path, capsys) -> None:
    code, out, err = run(capsys, "stats", "--no-cache", "spack")
    assert code == 2 and out == ""
    defaults = spack / "etc/spack/defaults/base/mirrors.yaml"
    assert "cachetui: error: spack: no binary mirror in Spack's configuration (looked in: " in err
    assert str(defaults) in err and "nothing loadable in spack" in err  # never the sample data


@needs_shared
def test_spack_in_the_config_files_sources_and_a_directory_named_spack(
    spack_with_a_mirror: Path, tmp_path: Path, capsys
) -> None:
    config = write(tmp_path / "elsewhere/c.toml", 'sources = ["spack"]\n')
    code, out, err = run(capsys, "stats", "--json", "--no-cache", "--config", str(config))
    assert code == 0 and json.loads(out)["specs"] > 0, err
    code, out, err = run(capsys, "config", "--json", "--config", str(config))
    assert settings(out)["sources"]["origin"] == (
        f"{config}; spack: Spack's mirrors ({spack_with_a_mirror})"
    )
    (tmp_path / "elsewhere/spack").symlink_to(SAMPLE_DATA)
    config.write_text('sources = ["./spack"]\n')  # a directory beside the file
    code, out, err = run(capsys, "stats", "--json", "--no-cache", "--config", str(config))
    assert (code, json.loads(out)["specs"]) == (0, SAMPLE.specs), err


@pytest.fixture
def app_loads(monkeypatch) -> dict:
    """The app, which instead of running loads as its worker would, and notes what it saw."""
    from cachetui.tui.app import CacheTUI

    seen: dict = {}

    def run(self, mouse: bool = True, **kw) -> None:
        report = self.service.load()
        seen.update(specs=report.index.n_specs, problems=report.problems)
        seen.update(service=self.service.sources_origin, config=self.config.sources_origin)

    monkeypatch.setattr(CacheTUI, "run", run)
    monkeypatch.setenv("TEXTUAL_FPS", "60")  # (run_app sets it when unset)
    return seen


@needs_shared
def test_the_app_reads_spacks_mirrors_in_its_load_and_knows_where_they_came_from(
    spack_with_a_mirror: Path, app_loads: dict
) -> None:
    assert main(["--no-cache"]) == 0
    assert app_loads["specs"] > 0 and app_loads["specs"] != SAMPLE.specs
    assert app_loads["service"] == app_loads["config"] == "Spack's mirrors"


def test_the_app_given_spack_with_no_mirror_starts_and_says_so(spack: Path, app_loads) -> None:
    assert main(["--no-cache", "spack"]) == 0  # not "no such file or directory"
    assert app_loads["specs"] == 0  # never the sample data
    [problem] = app_loads["problems"]
    assert problem.source == "spack" and problem.message.startswith("no binary mirror in Spack")
    assert app_loads["service"] == "the command line"
