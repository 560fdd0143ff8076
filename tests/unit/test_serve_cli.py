"""`cachetui serve` before any browser: its help, its usage errors (a port in use, a bad
option, missing sources) said plainly, the warning off loopback, the command each tab's app
runs, and no Textual in the server. The browser side is tests/e2e/test_serve.py."""

from __future__ import annotations

import signal
import socket
import subprocess
import sys
from pathlib import Path

import pytest
from helpers import INSTALLED

from cachetui.cli import main
from cachetui.cli.parser import command_parser, parse_anywhere
from cachetui.cli.serve import app_command


def run(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def serve(*argv: str, timeout: float = 30) -> subprocess.CompletedProcess:
    """`cachetui serve ARGV`, expected to end by itself (a usage error)."""
    return subprocess.run(
        [str(INSTALLED), "serve", *argv], capture_output=True, text=True, timeout=timeout
    )


def test_help_names_the_options_and_the_top_level_lists_serve(capsys) -> None:
    with pytest.raises(SystemExit) as exit_:
        main(["serve", "--help"])
    out = capsys.readouterr().out
    assert exit_.value.code == 0
    for option in ("--host", "--port", "--sessions", "--config", "--cache-dir", "SOURCE"):
        assert option in out
    with pytest.raises(SystemExit):
        main(["--help"])
    assert "  serve   the app in a browser" in capsys.readouterr().out


@pytest.mark.parametrize(
    ("argv", "said"),
    [
        (["--sessions", "0"], "argument --sessions: must be 1 or more"),
        (["--port", "70000"], "argument --port: must be 0 to 65535"),
        (["--port", "http"], "argument --port: not a whole number"),
    ],
)
def test_bad_options_are_usage_errors(capsys, argv: list[str], said: str) -> None:
    with pytest.raises(SystemExit) as exit_:
        main(["serve", *argv])
    assert exit_.value.code == 2 and said in capsys.readouterr().err


def test_only_missing_sources_is_a_usage_error(capsys, tmp_path: Path) -> None:
    code, _, err = run(capsys, "serve", "--port", "0", str(tmp_path / "missing"))
    assert code == 2 and "no such file or directory" in err


def test_a_port_in_use_is_said_so(tmp_path: Path) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        done = serve("--port", str(port))
    assert done.returncode == 2
    assert f"cachetui: address 127.0.0.1:{port} is in use" in done.stderr
    assert "--port 0" in done.stderr and "Traceback" not in done.stderr
    assert "token=" not in done.stdout  # no URL for a server that is not there


def test_an_unknown_host_is_said_so() -> None:
    done = serve("--host", "no-such-host.invalid", "--port", "0")
    assert done.returncode == 2
    assert "--host no-such-host.invalid: no such address" in done.stderr
    assert "Traceback" not in done.stderr


def test_off_loopback_it_warns_and_names_the_machine(tmp_path: Path) -> None:
    server = subprocess.Popen(
        [str(INSTALLED), "serve", "--host", "0.0.0.0", "--port", "0"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert server.stdout is not None
        banner = []
        for line in server.stdout:  # up to its last line, which says how to stop it
            banner.append(line)
            if "Ctrl+C" in line:
                break
    finally:
        server.send_signal(signal.SIGINT)
        _, err = server.communicate(timeout=20)
    assert server.returncode == 0
    out = "".join(banner)
    assert f"http://{socket.gethostname()}:" in out
    assert "cachetui: listening on 0.0.0.0:" in err and "not only this machine" in err
    assert "ssh -N -L " in out and "http://127.0.0.1:" in out  # the tunnel, to loopback


def test_each_tab_runs_this_cachetui_with_the_same_options(tmp_path: Path) -> None:
    options = parse_anywhere(
        command_parser("serve"),
        ["--cache-dir", "idx", "a", "--sessions", "2", "--config", "c.toml", "--", "-odd"],
    )
    assert options.sessions == 2 and options.sources == ["a", "-odd"]
    command = app_command(options)
    assert command[:3] == [sys.executable, "-m", "cachetui"]
    assert command[command.index("--cache-dir") + 1] == str(Path("idx").absolute())
    assert command[command.index("--config") + 1] == str(Path("c.toml").absolute())
    assert command[-3:] == ["--", "a", "-odd"]  # a source that looks like an option stays one


def test_the_server_imports_no_textual() -> None:
    probe = (
        "import sys\nfrom cachetui.cli.serve import serve_command\n"
        "from cachetui.web.server import make_app\nfrom cachetui.web.session import Sessions\n"
        "make_app('t', Sessions(['true'], 1))\n"
        "assert not any(m == 'textual' or m.startswith('textual.') for m in sys.modules), "
        "'textual imported'\n"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
