"""At home over SSH (issue 7), the parts that run without the app on screen: the pager
command, the `config` command and the config file's sources, colours set before Textual
is imported. The app itself: ui/test_session.py."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from helpers import SAMPLE, SAMPLE_DATA, fake_hash, record, write_summary

from cachetui.pager import run_pager

# -- the pager ---------------------------------------------------------------------------------


def test_run_pager_feeds_the_text_to_a_shell_command(tmp_path: Path) -> None:
    out = tmp_path / "out"
    assert run_pager(f"cat > {out}", "héllo\n") is None
    assert out.read_text(encoding="utf-8") == "héllo\n"
    assert "not found" in run_pager("no-such-pager-anywhere", "x")


def test_ctrl_c_in_the_pager_is_the_pagers_not_the_apps() -> None:
    """The terminal sends SIGINT to the whole foreground group: the pager stops, and the app
    (here an asyncio loop, whose own handler would cancel the app) carries on."""
    script = (
        "import asyncio, os, signal, threading, time\n"
        "from cachetui.pager import run_pager\n"
        "async def main():\n"
        "    threading.Timer(0.5, lambda: os.killpg(os.getpgrp(), signal.SIGINT)).start()\n"
        "    started = time.monotonic()\n"
        "    why = run_pager('sleep 20', 'x')\n"
        "    await asyncio.sleep(0.1)\n"
        "    print('app still running', why, round(time.monotonic() - started) < 10)\n"
        "asyncio.run(main())\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script],
        capture_output=True,
        text=True,
        timeout=60,
        start_new_session=True,
    )
    assert done.stdout.strip() == "app still running None True", (done.stdout, done.stderr[-500:])


# -- config: the command, sources, colours -------------------------------------------------------


def run_app_command(
    args: list[str], run_body: str, env: dict | None = None
) -> subprocess.CompletedProcess:
    """`cachetui ARGS` in a fresh process, whose app, instead of running, executes `run_body`
    (with `self` and `mouse`). A spy on the CLI's own import of the app puts it there: so
    what the CLI set before that import (the colours) is what Textual saw."""
    body = "\n".join("            " + line for line in run_body.splitlines())
    probe = (
        "import os, sys, builtins\n"
        "from cachetui import cli\n"
        "assert 'textual' not in sys.modules\n"
        "real_import = builtins.__import__\n"
        "def spy(name, *a, **k):\n"
        "    module = real_import(name, *a, **k)\n"
        "    if name == 'cachetui.tui.app' and not getattr(module, '_probed', False):\n"
        "        module._probed = True\n"
        "        def run(self, mouse=True, **kw):\n"
        f"{body}\n"
        "        module.CacheTUI.run = run\n"
        "    return module\n"
        "builtins.__import__ = spy\n"
        f"sys.exit(cli.main({args!r}))\n"
    )
    return subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, env=env, timeout=60
    )


def run_cli(*args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "cachetui", *args],
        capture_output=True,
        text=True,
        env={**os.environ, **(env or {})},
        timeout=60,
    )


def test_config_command_checks_what_the_app_checks(tmp_path: Path) -> None:
    path = tmp_path / "c.toml"
    path.write_text('theme = "no-such-theme"\n[keymap]\ncopy-hash = "c"\ncopy-install = "c"\n')
    done = run_cli("config", "--config", str(path), "--json")
    assert done.returncode == 2
    report = json.loads(done.stdout)
    errors = [p["error"] for p in report["problems"]]
    assert any("'theme'" in e and "no-such-theme" in e for e in errors), errors
    assert any("copy-hash" in e and "copy-install" in e for e in errors), (
        errors
    )  # one key, two bindings
    theme = next(row for row in report["settings"] if row["key"] == "theme")
    assert theme == {
        "key": "theme",
        "value": '"textual-dark"',
        "origin": "default",
    }  # what the app will use


def test_sources_in_the_config_that_are_missing_are_load_problems_not_a_refusal(
    tmp_path: Path,
) -> None:
    path = tmp_path / "c.toml"
    path.write_text('sources = ["/nonexistent/cache"]\n')
    done = run_app_command(
        ["--config", str(path)], "print('app started with', self.service.sources)"
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "app started with ['/nonexistent/cache']"


def test_config_command_says_where_each_value_came_from(tmp_path: Path) -> None:
    path = tmp_path / "c.toml"
    path.write_text('sources = ["data"]\ncolor = "256"\n[keymap]\ncopy-hash = "w"\n')
    done = run_cli("config", "--config", str(path), env={"PAGER": "most"})
    assert done.returncode == 0, done.stderr
    rows = {line.split()[0]: line for line in done.stdout.splitlines()[2:]}
    assert f'"{tmp_path / "data"}"' in rows["sources"] and rows["sources"].endswith(str(path))
    assert rows["color"].split()[1:] == ['"256"', str(path)]
    assert rows["pager"].split()[1:] == ['"most"', "$PAGER"]
    assert rows["mouse"].split()[1:] == ["true", "default"]
    assert rows["keymap.copy-hash"].split()[1:] == ['"w"', str(path)]
    path.write_text('[keymap]\ncopy-hsh = "c"\n')
    done = run_cli("config", "--config", str(path), "--json")
    assert done.returncode == 2
    problems = json.loads(done.stdout)["problems"]
    assert (
        problems[0]["source"] == str(path)
        and "copy-hsh" in problems[0]["error"]
        and "copy-hash" in problems[0]["error"]
    )


def test_sources_from_the_config_file_are_what_the_commands_read(tmp_path: Path) -> None:
    write_summary(tmp_path / "cache" / "develop" / "z" / "specs.md", "z", [record(fake_hash(1))])
    path = tmp_path / "c.toml"
    path.write_text('sources = ["cache"]\n')
    done = run_cli("stats", "--json", "--config", str(path), "--no-cache")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["specs"] == 1
    done = run_cli(
        "stats",
        "--json",
        "--config",
        str(path),
        "--no-cache",
        str(tmp_path / "cache"),
        str(SAMPLE_DATA),
    )
    assert json.loads(done.stdout)["specs"] == 1 + SAMPLE.specs  # the command line wins


@pytest.mark.parametrize(
    "flag, env_seen",
    [
        (["--color", "256"], "TEXTUAL_COLOR_SYSTEM=256 NO_COLOR=None"),
        (["--color", "none"], "TEXTUAL_COLOR_SYSTEM=auto NO_COLOR=1"),
        (["--color", "truecolor", "--no-mouse"], "TEXTUAL_COLOR_SYSTEM=truecolor NO_COLOR=None"),
    ],
)
def test_color_is_set_before_textual_is_imported_and_no_mouse_reaches_run(
    flag: list[str], env_seen: str
) -> None:
    # Spy on the CLI's own import of the app: by then the environment must be set.
    env = {k: v for k, v in os.environ.items() if k not in ("TEXTUAL_COLOR_SYSTEM", "NO_COLOR")}
    done = run_app_command(
        flag,
        "import textual.constants as c\n"
        'print(f\'TEXTUAL_COLOR_SYSTEM={c.COLOR_SYSTEM} NO_COLOR={os.environ.get("NO_COLOR")} '
        "mouse={mouse}')",
        env,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == f"{env_seen} mouse={'--no-mouse' not in flag}"
