"""`cachetui check ENV [SOURCE ...]`: will the environment install from the cache, and where
not, why not. Exit 0 when every spec that is not an external hits, 1 when some miss."""

from __future__ import annotations

import argparse
import sys

from cachetui.cli.common import EXIT_NO_MATCH, EXIT_OK, UsageError, load, print_json
from cachetui.model import Environment, EnvironmentUnreadable
from cachetui.output import (
    check_json,
    check_summary_text,
    counted,
    difference_text,
    tags_and_stacks,
)
from cachetui.textsafe import visible


def read_environment_or_usage_error(path: str) -> Environment:
    from cachetui.sources.environment import read_environment

    try:
        return read_environment(path)
    except EnvironmentUnreadable as error:
        raise UsageError(visible(str(error))) from None


def check_command(options: argparse.Namespace) -> int:
    from cachetui.service.check import check_environment

    environment = read_environment_or_usage_error(options.environment)
    for problem in environment.problems:
        print(
            f"cachetui: {problem.severity}: {visible(problem.source)}: {visible(problem.message)}",
            file=sys.stderr,
        )
    index = load(options).index
    report = check_environment(index, environment)
    if options.json:
        print_json(check_json(index, report))
    else:
        print("\n".join(report_lines(index, report)))
    return EXIT_OK if report.all_hit else EXIT_NO_MATCH


def report_lines(index, report) -> list[str]:
    environment = report.environment
    lines = [
        visible(
            f"{environment.source} ({environment.format}): "
            f"{counted(len(report.checks), 'spec')}, {counted(report.roots, 'root')}"
        )
    ]
    for check in (report.checks[at] for at in report.worst_first()):
        spec = check.spec
        root = " (root)" if spec.root else ""
        label = visible(f"{spec.name}@{spec.version} /{spec.hash[:7]}{root}")
        if check.status == "hit":
            lines.append(f"  hit       {label}  in {visible(_places(index, check.rows))}")
        elif check.status == "external":
            lines.append(f"  external  {label}")
        else:
            lines.append(f"  miss      {label}")
            if not check.nearest:
                lines.append("              no cached spec of this package")
            for near in check.nearest:
                tag = index.field("tag", near.row)
                lines.append(
                    visible(
                        f"              nearest {near.name}@{near.version} /{near.hash[:7]} "
                        f"({tag}): {counted(len(near.differences), 'difference')}"
                    )
                )
                if near.note:
                    lines.append("                " + visible(near.note))
                lines.extend(
                    "                " + visible(difference_text(d)) for d in near.differences
                )
    lines.append(check_summary_text(report))
    return lines


def _places(index, rows) -> str:
    """`develop (e4s, ml), v1.0.0`: the tags a hit is in, with their stacks."""
    return ", ".join(
        f"{tag} ({', '.join(names)})" if names else tag
        for tag, names in tags_and_stacks(index, rows).items()
    )
