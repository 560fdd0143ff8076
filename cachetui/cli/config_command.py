"""`cachetui config`: every setting, its value and where it came from."""

from __future__ import annotations

import argparse

from cachetui.cli.common import (
    EXIT_OK,
    EXIT_USAGE,
    config_problems_to_stderr,
    load_problems_to_stderr,
    print_json,
)
from cachetui.config import (
    describe,
    load_config,
    settle_sources,
)
from cachetui.output import (
    problem_json,
    table,
)
from cachetui.textsafe import visible


def config_command(options: argparse.Namespace) -> int:
    """Every setting with its value and where it came from; the config file's problems,
    checked as the app checks them (binding ids, keys that clash, theme names)."""
    from cachetui.tui.app import check_config  # the app's binding ids and themes: imports Textual

    config = load_config(options.config)
    check_config(config)
    chosen = settle_sources(config)  # (Spack's mirrors, when no sources are set)
    rows = describe(config)
    if options.json:
        print_json(
            {
                "file": str(config.path),
                "settings": [{"key": k, "value": v, "origin": o} for k, v, o in rows],
                "problems": [problem_json(p) for p in config.problems],
                # reading Spack's configuration: load problems, not the config file's
                "source_problems": [problem_json(p) for p in chosen.problems],
            }
        )
    else:
        print(
            f"config file: {visible(str(config.path))}"
            + ("" if config.path and config.path.exists() else " (not there: defaults)")
        )
        print(table(("key", "value", "from"), rows))
        config_problems_to_stderr(config)
        load_problems_to_stderr(chosen.problems)
    return EXIT_USAGE if config.problems else EXIT_OK
