"""Command line: `cachetui [SOURCE ...]` opens the app; `stats`, `lookup` and `search`
answer from the same index for scripts. Only the app path imports Textual, so the
sub-commands start fast.

Exit codes (a public contract): 0 success, 1 nothing matched, 2 bad usage or nothing
loadable (the reason on stderr).
"""

from __future__ import annotations

import sys
from collections.abc import Sequence

from cachetui.cli.check import check_command
from cachetui.cli.common import EXIT_NO_MATCH, EXIT_OK, EXIT_USAGE, UsageError
from cachetui.cli.config_command import config_command
from cachetui.cli.deps import deps
from cachetui.cli.diff import diff_command
from cachetui.cli.lookup import lookup
from cachetui.cli.parser import COMMANDS, app_parser, command_parser, parse_anywhere
from cachetui.cli.run_app import run_app
from cachetui.cli.search import search
from cachetui.cli.serve import serve_command
from cachetui.cli.stats import stats
from cachetui.textsafe import visible

__all__ = ["EXIT_NO_MATCH", "EXIT_OK", "EXIT_USAGE", "main", "parse_anywhere"]

RUN = {
    "stats": stats,
    "lookup": lookup,
    "search": search,
    "deps": deps,
    "diff": diff_command,
    "config": config_command,
    "check": check_command,
    "serve": serve_command,
}


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    try:
        if args and args[0] in COMMANDS:
            command = args[0]
            options = parse_anywhere(command_parser(command), args[1:])
            return RUN[command](options)
        options = parse_anywhere(app_parser(), args)
        return run_app(options)
    except UsageError as error:
        print(f"cachetui: {error}", file=sys.stderr)
        return EXIT_USAGE
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:  # `cachetui search x | head`
        sys.stderr.close()
        return EXIT_OK
    except Exception as error:  # never a traceback in front of a user
        print(
            f"cachetui: internal error: {type(error).__name__}: {visible(str(error))}",
            file=sys.stderr,
        )
        print("cachetui: please report this with the command you ran", file=sys.stderr)
        return EXIT_USAGE
