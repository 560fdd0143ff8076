"""The command line's parsers: options anywhere among the arguments, `--` ends them, `--help`
on every command."""

from __future__ import annotations

import argparse

from cachetui import __version__
from cachetui.config import (
    COLORS,
    default_config_path,
)
from cachetui.textsafe import visible

SOURCES_HELP = (
    "cache.spack.io summaries, Spack build-cache index.json files, mirror roots, "
    "cache_spack_io_index.json "
    "tag maps, spec files: files, directories or http(s)/file/s3 URLs; `spack`: the binary "
    "mirrors Spack is configured with (default: the config file's sources, else Spack's mirrors, "
    "else the bundled sample data)"
)


COMMANDS = {
    "stats": "counts of packages, specs, tags and facet values",
    "lookup": "every spec whose hash starts with PREFIX",
    "search": "specs matching QUERY (Spack spec syntax; names fuzzy), by package",
    "deps": (
        "the dependency tree of the spec whose hash starts with PREFIX (--reverse: what uses it)"
    ),
    "diff": (
        "what changed from OLD to NEW (cache tags among the sources, or sources): specs added, "
        "removed, rebuilt"
    ),
    "check": (
        "whether an environment installs from the cache: each spec a hit or a miss, and for a "
        "miss the nearest cached specs and what differs"
    ),
    "config": (
        "every setting, its value and where it came from (config file, $PAGER, remembered, default)"
    ),
    "serve": (
        "the app in a browser: a web server (on 127.0.0.1, behind a token, by default), an "
        "app of its own for each browser tab"
    ),
}

ENV_HELP = (
    "check an environment against the cache: a spack.lock, an environment directory, "
    "a spec file or an install database (adds the Environment filter, and E: its coverage)"
)


def app_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="cachetui",
        description="A terminal explorer for Spack binary build caches.",
        epilog="commands (cachetui COMMAND --help for more):\n"
        + "\n".join(f"  {name:<8}{text}" for name, text in COMMANDS.items()),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("sources", nargs="*", metavar="SOURCE", help=SOURCES_HELP)
    _cache_options(parser)
    parser.add_argument(
        "--color",
        choices=COLORS,
        help=(
            "colours: auto (the terminal's), 256, truecolor or none (default: the config file's, "
            "else auto)"
        ),
    )
    parser.add_argument("--env", metavar="ENV", help=ENV_HELP)
    parser.add_argument(
        "--no-mouse",
        action="store_true",
        help="leave the mouse to the terminal (to select text with it)",
    )
    parser.add_argument("--version", action="version", version=f"cachetui {__version__}")
    return parser


def _cache_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--config",
        metavar="FILE",
        help=f"the config file (default: {visible(str(default_config_path()))})",
    )
    parser.add_argument(
        "--no-cache", action="store_true", help="neither read nor write the on-disk index"
    )
    parser.add_argument(
        "--cache-dir",
        metavar="DIR",
        help="where the on-disk index lives (default: the user cache directory)",
    )


def command_parser(command: str) -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog=f"cachetui {command}", description=COMMANDS[command].capitalize() + "."
    )
    if command == "config":
        parser.add_argument(
            "--config",
            metavar="FILE",
            help=f"the config file (default: {visible(str(default_config_path()))})",
        )
        parser.add_argument("--json", action="store_true", help="write JSON for scripts")
        return parser
    if command == "serve":
        return _serve_parser(parser)
    if command == "diff":
        parser.add_argument(
            "old",
            metavar="OLD",
            help="a cache tag among the SOURCEs (develop, v0.23.0, ...), or a source of its own",
        )
        parser.add_argument("new", metavar="NEW", help="the same, for the newer side")
    if command == "check":
        parser.add_argument(
            "environment",
            metavar="ENV",
            help="a spack.lock, an environment directory holding one, a spec file "
            "(spack spec --json) or a Spack install database (.spack-db/index.json)",
        )
    if command in ("lookup", "deps"):
        parser.add_argument(
            "prefix",
            metavar="PREFIX",
            help="1 to 32 characters of a hash, optionally with a leading /; "
            "or a line of a log or an install path holding a full hash",
        )
    if command == "deps":
        parser.add_argument(
            "--reverse",
            action="store_true",
            help="what depends on the spec (transitively), instead of what it depends on",
        )
    elif command == "search":
        parser.add_argument(
            "query",
            metavar="QUERY",
            help="Spack spec syntax: a package name (typos allowed) and/or "
            "constraints, e.g. 'zlib@1.3: %%gcc@13 +shared os=ubuntu24.04 stack=e4s /abc12'",
        )
        parser.add_argument(
            "--limit",
            type=_limit,
            default=100,
            metavar="N",
            help="at most N packages and N specs (default 100, 0 = no cap)",
        )
        parser.add_argument(
            "--exact",
            action="store_true",
            help=(
                "package names as Spack reads them (the exact name, or a glob such as 'py-*'), "
                "not ranked with typos allowed"
            ),
        )
    parser.add_argument("sources", nargs="*", metavar="SOURCE", help=SOURCES_HELP)
    formats = parser.add_mutually_exclusive_group()
    formats.add_argument("--json", action="store_true", help="write JSON for scripts")
    if command == "search":
        formats.add_argument(
            "--csv",
            action="store_true",
            help="write the matching specs as CSV, a header line first",
        )
        formats.add_argument(
            "--specs",
            action="store_true",
            help=(
                "write the matching specs one a line as Spack 1.x reads them back, "
                "`name@version+variants arch=platform-os-target /hash %%c,cxx=gcc@13`"
            ),
        )
    _cache_options(parser)
    return parser


def _serve_parser(parser: argparse.ArgumentParser) -> argparse.ArgumentParser:
    parser.add_argument("sources", nargs="*", metavar="SOURCE", help=SOURCES_HELP)
    parser.add_argument(
        "--host",
        default="127.0.0.1",
        help="the address to listen on (default 127.0.0.1: this machine only, reached from "
        "elsewhere through an SSH tunnel; another address lets other machines in, with the token)",
    )
    parser.add_argument(
        "--port",
        type=_port,
        default=8765,
        help="the port to listen on (default 8765; 0: any free port)",
    )
    parser.add_argument(
        "--sessions",
        type=_sessions,
        default=4,
        metavar="N",
        help="at most N apps at once, one for each open browser tab (default 4)",
    )
    parser.add_argument("--env", metavar="ENV", help=ENV_HELP)
    _cache_options(parser)
    return parser


def _port(text: str) -> int:
    value = _limit(text)
    if value > 65535:
        raise argparse.ArgumentTypeError("must be 0 to 65535")
    return value


def _sessions(text: str) -> int:
    value = _limit(text)
    if value == 0:
        raise argparse.ArgumentTypeError("must be 1 or more")
    return value


def _limit(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a whole number: {text!r}") from None
    if value < 0:
        raise argparse.ArgumentTypeError("must be 0 or more")
    return value


def parse_anywhere(parser: argparse.ArgumentParser, args: list[str]) -> argparse.Namespace:
    """Options anywhere among the arguments (`search QUERY --json SOURCE`), and `--` ends
    them (`search -- -cuda`: a query that begins with `-`). argparse's intermixed parsing
    does the first; what follows `--` is held out of its reach (it mishandles `--` there)
    and put back among the positionals."""
    if "--" not in args:
        return parser.parse_intermixed_args(args)
    cut = args.index("--")
    rest = args[cut + 1 :]
    held = {f"\0{at}": value for at, value in enumerate(rest)}  # a NUL never comes from a shell
    options = parser.parse_intermixed_args(args[:cut] + list(held))
    for name, value in vars(options).items():
        if isinstance(value, str) and value in held:
            setattr(options, name, held[value])
        elif isinstance(value, list):
            setattr(
                options,
                name,
                [held.get(item, item) if isinstance(item, str) else item for item in value],
            )
    return options
