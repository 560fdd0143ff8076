"""`cachetui serve [SOURCE ...]`: the app in a browser (cachetui.web). Each tab runs
`python -m cachetui` with this command's sources, config, on-disk index and environment, so it
is the app a terminal gets, keys and all."""

from __future__ import annotations

import argparse
import errno
import getpass
import ipaddress
import secrets
import socket
import sys
from pathlib import Path

from cachetui.cli.common import UsageError, check_sources_exist, config_problems_to_stderr
from cachetui.config import load_config
from cachetui.textsafe import visible
from cachetui.urls import is_url


def serve_command(options: argparse.Namespace) -> int:
    from cachetui.web.server import bind, run

    config = load_config(options.config, state_path=None)
    config_problems_to_stderr(config)  # each app shows them too; said once here, at the start
    check_sources_exist(options.sources)
    try:
        sock = bind(options.host, options.port)
    except socket.gaierror as error:
        raise UsageError(
            f"--host {visible(options.host)}: no such address ({error.strerror})"
        ) from None
    except OSError as error:
        raise UsageError(_bind_error(options.host, options.port, error)) from None
    host, port = sock.getsockname()[:2]
    token = secrets.token_urlsafe(16)
    loopback = ipaddress.ip_address(host).is_loopback
    if not loopback:
        print(
            f"cachetui: listening on {_in_url(host)}:{port}, not only this machine's loopback: "
            "anyone who can reach it and has the URL with its token opens the app, and the "
            "connection is not encrypted (http)",
            file=sys.stderr,
        )

    def ready() -> None:
        print(_banner(host, port, token, options.sessions), flush=True)

    def stopping(live: int) -> None:
        apps = f"{live} app{'' if live == 1 else 's'}"
        print(f"cachetui: stopping the server and its {apps}", file=sys.stderr, flush=True)

    with sock:
        import asyncio  # (here: every other command would pay for it at start)

        asyncio.run(run(sock, token, app_command(options), options.sessions, ready, stopping))
    return 0


def app_command(options: argparse.Namespace) -> list[str]:
    """The command each tab's app runs: this Python, this cachetui, the same options."""
    command = [sys.executable, "-m", "cachetui"]
    if options.config:
        command += ["--config", _absolute(options.config)]
    if options.cache_dir:
        command += ["--cache-dir", _absolute(options.cache_dir)]
    if options.no_cache:
        command.append("--no-cache")
    if options.env:
        command += ["--env", options.env if is_url(options.env) else _absolute(options.env)]
    # Sources as given: the apps start in this directory. After `--`, none is an option.
    return [*command, "--", *options.sources]


def _absolute(path: str) -> str:
    return str(Path(path).expanduser().absolute())


def _bind_error(host: str, port: int, error: OSError) -> str:
    where = f"{visible(host)}:{port}"
    if error.errno == errno.EADDRINUSE:
        return (
            f"address {where} is in use (another cachetui serve?): choose another port with "
            "--port PORT, or --port 0 for any free one"
        )
    if error.errno == errno.EADDRNOTAVAIL:
        return f"cannot listen on {where}: not an address of this machine"
    if error.errno == errno.EACCES:
        return f"cannot listen on {where}: permission denied (ports below 1024 need root)"
    return f"cannot listen on {where}: {visible(error.strerror or str(error))}"


def _in_url(host: str) -> str:
    return f"[{host}]" if ":" in host else host


def _banner(host: str, port: int, token: str, sessions: int) -> str:
    """The URL, the SSH tunnel that reaches it from a laptop, the limits."""
    address = ipaddress.ip_address(host)
    if address.is_unspecified:  # every address: name the machine; the tunnel takes loopback
        url_host, tunnel_host = socket.gethostname(), "127.0.0.1"
    else:
        url_host = tunnel_host = _in_url(host)
    url = f"http://{url_host}:{port}/?token={token}"
    laptop = f"http://127.0.0.1:{port}/?token={token}"
    try:
        user = getpass.getuser()
    except (KeyError, OSError):  # no login name to be found
        user = "USER"
    lines = [
        "cachetui serve: open this URL in a browser (the token in it is the key: keep it to "
        "yourself)",
        f"  {url}",
        "From another machine, through SSH (then open the same URL there, on 127.0.0.1):",
        f"  ssh -N -L {port}:{tunnel_host}:{port} {user}@{socket.gethostname()}",
        f"At most {sessions} tab{'' if sessions == 1 else 's'} at once, each its own app; "
        "Ctrl+C stops the server and every app.",
    ]
    if laptop != url:
        lines.insert(4, f"  {laptop}")
    return "\n".join(lines)
