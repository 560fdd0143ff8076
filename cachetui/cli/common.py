"""What every sub-command shares: loading with problems on stderr, usage errors, exit codes,
JSON on stdout."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from cachetui.config import (
    SPACK_SOURCE,
    Config,
    load_config,
    settle_sources,
)
from cachetui.index.hashes import HashPrefixError, hash_prefix_in
from cachetui.model import LoadProblem
from cachetui.output import (
    download_text,
    json_text,
)
from cachetui.service import IndexService, LoadReport
from cachetui.textsafe import visible
from cachetui.urls import is_url

EXIT_OK, EXIT_NO_MATCH, EXIT_USAGE = 0, 1, 2


class UsageError(Exception):
    """Bad usage, or nothing loadable: said on stderr, exit code 2."""


def service_for(
    options: argparse.Namespace, config: Config, environment: str | None = None
) -> IndexService:
    """The service for the sources named on the command line, else the config file's, else
    Spack's mirrors, else the sample data; `spack` among them is Spack's mirrors. Settled when
    it loads (the app's worker), and kept in `config.chosen`. `environment`: checked against
    the cache at each load (the app's --env)."""
    return IndexService(
        sources_of(options, config),
        cache_dir=options.cache_dir,
        use_cache=not options.no_cache,
        environment=environment,
        settle=lambda: settle_sources(config, options.sources),
    )


def sources_of(options: argparse.Namespace, config: Config) -> list[str]:
    """The sources as given: on the command line, else in the config file (none: Spack's
    mirrors or the sample data, `spack`: Spack's mirrors, both settled by the service)."""
    return options.sources or config.sources


def check_sources_exist(sources: list[str]) -> None:
    """Before the app starts: a usage error when every source named on the command line is a
    path that does not exist. (Some missing, the config file's missing, or `spack` with no
    mirror: load problems, shown in the app as any.)"""
    missing = [
        s
        for s in sources
        if not is_url(s) and s != SPACK_SOURCE and not Path(s).expanduser().exists()
    ]
    if sources and len(missing) == len(sources):
        raise UsageError("no such file or directory: " + ", ".join(visible(s) for s in missing))


def config_problems_to_stderr(config: Config) -> None:
    for problem in config.problems:
        print(
            f"cachetui: warning: {visible(problem.source)}: {visible(problem.message)}",
            file=sys.stderr,
        )


def load_problems_to_stderr(problems: list[LoadProblem]) -> None:
    for problem in problems:
        print(
            f"cachetui: {problem.severity}: {visible(problem.source)}: {visible(problem.message)}",
            file=sys.stderr,
        )


def load(options: argparse.Namespace) -> LoadReport:
    """Load for a sub-command: problems go to stderr; nothing loadable is a usage error."""
    config = load_config(options.config, state_path=None)
    config_problems_to_stderr(config)
    service = service_for(options, config)
    report = service.load(download=download_progress() if sys.stderr.isatty() else None)
    load_problems_to_stderr(report.problems)
    if report.index.n_specs == 0:
        sample = config.chosen is None or config.chosen.sample
        named = ["the sample data"] if sample else sources_of(options, config) or service.sources
        raise UsageError("nothing loadable in " + ", ".join(visible(s) for s in named))
    return report


def download_progress():
    """On a terminal, one line on stderr that follows a download (cleared when it ends)."""

    def show(url: str, done: int, total: int | None) -> None:
        line = f"cachetui: {download_text(url, done, total)}"
        finished = total is not None and done >= total
        sys.stderr.write("\r\x1b[K" + ("" if finished else line))
        sys.stderr.flush()

    return show


def print_json(value: object) -> None:
    sys.stdout.write(json_text(value) + "\n")


def hash_prefix_of(options: argparse.Namespace) -> tuple[str, str]:
    """(the hash prefix, how to name it to the user)."""
    try:
        prefix = hash_prefix_in(options.prefix)  # a prefix, or a pasted log line with a hash
    except HashPrefixError as error:
        raise UsageError(f"bad hash prefix {visible(options.prefix)!r}: {error}") from None
    return prefix, options.prefix if options.prefix.strip().lstrip(
        "/"
    ).lower() == prefix else prefix
