"""Command line: `cachetui [SOURCE ...]` opens the app; `stats`, `lookup` and `search`
answer from the same index for scripts. Only the app path imports Textual, so the
sub-commands start fast.

Exit codes (a public contract): 0 success, 1 nothing matched, 2 bad usage or nothing
loadable (the reason on stderr).
"""

from __future__ import annotations

import argparse
import os
import re
import sys
from collections.abc import Sequence

from cachetui import __version__
from cachetui.config import (
    COLORS,
    ORIGIN_COMMAND_LINE,
    Config,
    default_config_path,
    describe,
    load_config,
)
from cachetui.index.filter import Filter
from cachetui.index.hashes import HashPrefixError, hash_prefix_in
from cachetui.model import BINARY_KIND
from cachetui.output import (
    SPEC_COLUMNS,
    edge_json,
    json_text,
    size_text,
    spec_cells,
    spec_json,
    spec_line,
    table,
    write_csv,
    write_spec_lines,
)
from cachetui.service import IndexService, LoadReport
from cachetui.textsafe import visible

EXIT_OK, EXIT_NO_MATCH, EXIT_USAGE = 0, 1, 2

SOURCES_HELP = (
    "cache.spack.io summaries, Spack build-cache index.json files, mirror roots, "
    "cache_spack_io_index.json tag maps, spec files: files, directories or http(s)/file/s3 URLs "
    "(default: the bundled sample data)"
)
COMMANDS = {
    "stats": "counts of packages, specs, tags and facet values",
    "lookup": "every spec whose hash starts with PREFIX",
    "search": "specs matching QUERY (Spack spec syntax; names fuzzy), by package",
    "deps": (
        "the dependency tree of the spec whose hash starts with PREFIX (--reverse: what uses it)"
    ),
    "diff": (
        "what changed from OLD to NEW (cache tags among the sources, or sources): "
        "specs added, removed, rebuilt"
    ),
    "config": (
        "every setting, its value and where it came from (config file, $PAGER, remembered, default)"
    ),
}


_URL = re.compile(r"(?i)^(https?|file|s3)://")


class _UsageError(Exception):
    pass


def _app_parser() -> argparse.ArgumentParser:
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
            "colours: auto (the terminal's), 256, truecolor or none "
            "(default: the config file's, else auto)"
        ),
    )
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


def _command_parser(command: str) -> argparse.ArgumentParser:
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
    if command == "diff":
        parser.add_argument(
            "old",
            metavar="OLD",
            help="a cache tag among the SOURCEs (develop, v0.23.0, ...), or a source of its own",
        )
        parser.add_argument("new", metavar="NEW", help="the same, for the newer side")
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


def _limit(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a whole number: {text!r}") from None
    if value < 0:
        raise argparse.ArgumentTypeError("must be 0 or more")
    return value


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    try:
        if args and args[0] in COMMANDS:
            command = args[0]
            options = parse_anywhere(_command_parser(command), args[1:])
            return {
                "stats": _stats,
                "lookup": _lookup,
                "search": _search,
                "deps": _deps,
                "diff": _diff,
                "config": _config,
            }[command](options)
        options = parse_anywhere(_app_parser(), args)
        return _run_app(options)
    except _UsageError as error:
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


def _service(options: argparse.Namespace, config: Config) -> IndexService:
    return IndexService(
        _sources(options, config), cache_dir=options.cache_dir, use_cache=not options.no_cache
    )


def _sources(options: argparse.Namespace, config: Config) -> list[str]:
    """The sources named on the command line, else the config file's (else the sample data)."""
    return options.sources or config.sources


def _config_problems_to_stderr(config: Config) -> None:
    for problem in config.problems:
        print(
            f"cachetui: warning: {visible(problem.source)}: {visible(problem.message)}",
            file=sys.stderr,
        )


def _load(options: argparse.Namespace) -> LoadReport:
    """Load for a sub-command: problems go to stderr; nothing loadable is a usage error."""
    config = load_config(options.config, state_path=None)
    _config_problems_to_stderr(config)
    sources = _sources(options, config)
    report = _service(options, config).load(
        download=_download_progress() if sys.stderr.isatty() else None
    )
    for problem in report.problems:
        print(
            f"cachetui: {problem.severity}: {visible(problem.source)}: {visible(problem.message)}",
            file=sys.stderr,
        )
    if report.index.n_specs == 0:
        raise _UsageError(
            "nothing loadable in " + ", ".join(visible(s) for s in sources or ["the sample data"])
        )
    return report


def _download_progress():
    """On a terminal, one line on stderr that follows a download (cleared when it ends)."""

    def show(url: str, done: int, total: int | None) -> None:
        name = visible(url.rstrip("/").rsplit("/", 1)[-1][:40])
        of = f" of {total / 1e6:,.1f}" if total else ""
        line = f"cachetui: downloading {name}: {done / 1e6:,.1f}{of} MB"
        finished = total is not None and done >= total
        sys.stderr.write("\r\x1b[K" + ("" if finished else line))
        sys.stderr.flush()

    return show


def _print_json(value: object) -> None:
    sys.stdout.write(json_text(value) + "\n")


# -- stats ------------------------------------------------------------------------------


def _stats(options: argparse.Namespace) -> int:
    report = _load(options)
    index = report.index
    facets = {
        facet: {
            v: c
            for v, c in zip(
                index.facet_values[facet], (b.bit_count() for b in index.facet_bits[facet])
            )
        }
        for facet in ("stack", "os", "target", "compiler", "platform")
    }
    tags = {v: b.bit_count() for v, b in zip(index.facet_values["tag"], index.facet_bits["tag"])}
    kinds = {v: b.bit_count() for v, b in zip(index.facet_values["kind"], index.facet_bits["kind"])}
    if options.json:
        _print_json(
            {
                "packages": index.n_packages,
                "specs": index.n_specs,
                "kinds": kinds,
                "tags": tags,
                "facets": facets,
                "problems": [
                    {"source": p.source, "error": p.message, "severity": p.severity}
                    for p in report.problems
                ],
            }
        )
        return EXIT_OK
    apart = (
        f" ({', '.join(f'{c:,} {_KIND_COUNTED.get(kind, kind)}' for kind, c in kinds.items())})"
        if set(kinds) - {BINARY_KIND}
        else ""
    )
    print(
        f"{index.n_packages:,} packages, {index.n_specs:,} specs{apart} from {report.files:,} files"
    )
    if report.problems:
        print(f"{len(report.problems):,} load problems (listed on stderr)")
    for title, counts in [("tag", tags)] + list(facets.items()):
        print()
        ranked = sorted(counts.items(), key=lambda item: (-item[1], item[0]))
        print(table((title, "specs"), ((v, f"{c:,}") for v, c in ranked), right=(1,)))
    return EXIT_OK


_KIND_COUNTED = {BINARY_KIND: "binaries"}


# -- lookup -----------------------------------------------------------------------------


def _prefix(options: argparse.Namespace) -> tuple[str, str]:
    """(the hash prefix, how to name it to the user)."""
    try:
        prefix = hash_prefix_in(options.prefix)  # a prefix, or a pasted log line with a hash
    except HashPrefixError as error:
        raise _UsageError(f"bad hash prefix {visible(options.prefix)!r}: {error}") from None
    return prefix, options.prefix if options.prefix.strip().lstrip(
        "/"
    ).lower() == prefix else prefix


def _lookup(options: argparse.Namespace) -> int:
    prefix, shown = _prefix(options)
    index = _load(options).index
    rows = index.lookup_hash(prefix)
    if options.json:
        _print_json({"prefix": prefix, "specs": [spec_json(index, r) for r in rows]})
    elif not rows:
        print(f"no spec has a hash starting with {visible(shown)!r}", file=sys.stderr)
    elif len(rows) == 1:
        print(_detail_text(index, rows[0]))
    else:
        print(f"{len(rows)} specs have a hash starting with {visible(shown)!r}:")
        print(table(SPEC_COLUMNS, (spec_cells(index, r) for r in rows)))
        print(f"ambiguous: give more characters of the hash to name one of these {len(rows)}")
    return EXIT_OK if rows else EXIT_NO_MATCH


def _detail_text(index, row: int) -> str:
    spec = index.spec(row)
    fields = [
        ("hash", spec.hash),
        ("spec", f"{spec.package}@{spec.version}"),
        ("compiler", spec.compiler),
        ("arch", spec.arch),
        ("variants", " ".join(spec.variants) or "-"),
        ("stacks", ", ".join(spec.stacks) or "-"),
        ("size", size_text(spec.size)),
        ("tag", spec.tag),
        ("kind", spec.kind),
        ("tarball", spec.tarball or "unknown"),
    ]
    files = index.binary_files(row)
    fields += [
        (label, url)
        for label, url in (("spec file", files.spec_file), ("manifest", files.manifest))
        if url
    ]
    fields += [("source", spec.source), ("install", spec.install_command)]
    return table(("field", "value"), fields).split("\n", 1)[1]


# -- deps -------------------------------------------------------------------------------


def _deps(options: argparse.Namespace) -> int:
    from cachetui.index.deps import dependencies_of, reverse_tree

    prefix, shown = _prefix(options)
    index = _load(options).index
    rows = index.lookup_hash(prefix)
    if not rows:
        if not options.json:
            print(f"no spec has a hash starting with {visible(shown)!r}", file=sys.stderr)
        else:
            _print_json({"prefix": prefix, "spec": None})
        return EXIT_NO_MATCH
    hashes = sorted({index.hashes[r] for r in rows})
    if len(hashes) > 1:
        listed = "\n".join(f"  {spec_line(index, index.lookup_hash(h)[0])}" for h in hashes[:20])
        raise _UsageError(
            f"{len(hashes)} specs have a hash starting with {visible(shown)!r}; "
            f"give more characters:\n{visible(listed)}"
        )
    row = rows[0]
    found = dependencies_of(index, row)
    if index.graph_problem:
        print(f"cachetui: warning: {visible(index.graph_problem)}", file=sys.stderr)
    if options.reverse and found is not None:
        tree, cut = reverse_tree(index.graph, index.graph.node_of_row(row))
    else:
        tree, cut = (found.tree, found.cut) if found is not None else ([], False)
    if options.json:
        record: dict = {
            "prefix": prefix,
            "spec": spec_json(index, row),
            "reverse": options.reverse,
            "cut": cut,
        }
        if found is None:
            record["dependencies" if not options.reverse else "dependents"] = None
        elif options.reverse:
            record["dependents"] = [
                edge_json(line.dependency, line.depth, line.repeated) for line in tree
            ]
        else:
            record["dependencies"] = [
                edge_json(line.dependency, line.depth, line.repeated) for line in tree
            ]
            record["build"] = [edge_json(d, 1, False) for d in found.build]
        _print_json(record)
        return EXIT_OK
    print(visible(spec_line(index, row)))
    if found is None and index.graph_problem:
        print(
            "no dependency information: the on-disk index could not give it this time (see above)"
        )
        return EXIT_OK
    if found is None:
        print(
            f"no dependency information: {visible(index.field('source', row))} "
            "is a cache.spack.io summary, which lists none"
        )
        return EXIT_OK
    sections = (
        [("used by (transitively)", tree)]
        if options.reverse
        else [
            ("depends on (link/run)", tree),
            ("build dependencies", [_Line(1, d) for d in found.build]),
        ]
    )
    for title, lines in sections:
        print(f"{title}:")
        for line in lines or [None]:
            print(
                "  (none)"
                if line is None
                else "  " + "  " * (line.depth - 1) + _edge_text(line.dependency, line.repeated)
            )
    if cut:
        print(f"(cut at {len(tree):,} lines)")
    return EXIT_OK


class _Line:
    def __init__(self, depth: int, dependency) -> None:
        self.depth, self.dependency, self.repeated = depth, dependency, False


def _edge_text(dependency, repeated: bool) -> str:
    parts = [
        f"{dependency.name}@{dependency.version}" if dependency.version else dependency.name,
        f"/{dependency.hash[:7]}",
        f"[{','.join(dependency.deptype_names)}]",
    ]
    if dependency.virtuals:
        parts.append(f"%{','.join(dependency.virtuals)}")
    if dependency.kind_name != "binary":
        parts.append(f"({dependency.kind_name})")
    if repeated:
        parts.append("(see above)")
    return visible(" ".join(parts))


# -- diff -------------------------------------------------------------------------------


def _diff(options: argparse.Namespace) -> int:
    from dataclasses import replace

    from cachetui.index.diff import diff

    loaded: dict[str, LoadReport] = {}

    def report_of(sources: list[str] | None) -> LoadReport:
        key = "\0".join(sources or [])
        if key not in loaded:
            scoped = argparse.Namespace(
                **{**vars(options), "sources": sources if sources is not None else options.sources}
            )
            loaded[key] = _load(scoped)
        return loaded[key]

    old, new = _side(options.old, report_of), _side(options.new, report_of)
    if (
        old.label == new.label and options.old != options.new
    ):  # two snapshots of one tag: say which is which
        old, new = replace(old, label=options.old), replace(new, label=options.new)
    changes = diff(old, new)
    if options.json:
        _print_json(changes.to_json())
        return EXIT_OK if changes.packages else EXIT_NO_MATCH
    print(visible(f"{old.label} -> {new.label}: {changes.summary()}"))
    line_of = {
        **{old.index.hashes[r]: (old.index, r) for r in old.rows},
        **{new.index.hashes[r]: (new.index, r) for r in new.rows},
    }
    for name, change in changes.packages.items():
        print(f"\n{visible(name)}")
        for mark, hashes in (("+", change.added), ("-", change.removed)):
            for digest in hashes:
                print(f"  {mark} {visible(spec_line(*line_of[digest]))}")
        for old_hash, new_hash in change.rebuilt:
            print(f"  ~ {visible(spec_line(*line_of[old_hash]))} -> /{new_hash}")
    return EXIT_OK if changes.packages else EXIT_NO_MATCH


def _side(name: str, report_of):
    """A tag among the sources, else a source (file, directory, URL) of its own."""
    from pathlib import Path

    from cachetui.index.diff import Side

    if _URL.match(name) or Path(name).expanduser().exists():
        index = report_of([name]).index
        tags = index.facet_values.get("tag", [])
        return Side(tags[0] if len(tags) == 1 else name, index, list(range(index.n_specs)))
    index = report_of(None).index
    tags = index.facet_values.get("tag", [])
    if name not in tags:
        raise _UsageError(
            f"{visible(name)!r} is neither a cache tag among the sources "
            f"({', '.join(visible(t) for t in tags)}) "
            "nor a file, directory or URL"
        )
    return Side(name, index, index.rows_in(index.facet_bits["tag"][tags.index(name)]))


# -- search -----------------------------------------------------------------------------


def _search(options: argparse.Namespace) -> int:
    if not options.query.strip():
        raise _UsageError("search needs a QUERY")
    from cachetui.index.evaluate import evaluate  # numpy: only the sub-commands that query
    from cachetui.index.query import QueryError, parse_query

    try:
        parse_query(options.query)  # before loading: a typo in the query is reported at once
    except QueryError as error:
        where = (
            f"\n{error.pointer(options.query)}" if options.query.isprintable() else ""
        )  # columns hold
        raise _UsageError(f"bad query: {visible(error.message)}{where}") from None
    report = _load(options)
    index = report.index
    try:
        result = evaluate(index, Filter(options.query), exact=options.exact)
    except QueryError as error:  # what these sources cannot answer (`^` in summaries)
        raise _UsageError(f"bad query: {visible(error.message)}") from None
    cap = options.limit or None
    packages = result.packages[:cap]
    counts = dict(zip(result.packages, result.counts))  # the specs of each that match
    rows: list[int] = []
    for package in packages:
        if cap is not None and len(rows) >= cap:
            break
        rows.extend(index.rows_in_package(package, result.mask))
    rows = rows[:cap]
    if options.json:
        _print_json(
            {
                "packages": [{"name": index.packages[p], "specs": counts[p]} for p in packages],
                "specs": [spec_json(index, r) for r in rows],
            }
        )
    elif options.csv:
        write_csv(index, rows, sys.stdout)
    elif options.specs:
        write_spec_lines(index, rows, sys.stdout)
    elif packages:
        print(
            table(
                ("package", "specs"),
                ((index.packages[p], f"{counts[p]:,}") for p in packages),
                right=(1,),
            )
        )
        print()
        print(table(SPEC_COLUMNS, (spec_cells(index, r) for r in rows)))
        shown = len(result.packages) - len(packages), sum(counts[p] for p in packages) - len(rows)
        if any(shown):
            print(
                f"\n(--limit {options.limit}: {shown[0]:,} more packages "
                f"and {shown[1]:,} more specs not shown)"
            )
    unwritten = result.matching_specs - len(rows)
    if unwritten and (options.json or options.csv or options.specs):  # a file cut short must say so
        print(
            f"cachetui: --limit {options.limit}: {unwritten:,} more matching specs not written "
            "(--limit 0 writes all)",
            file=sys.stderr,
        )
    if not packages and not (options.json or options.csv or options.specs):
        print(f"no package matches {visible(options.query)!r}", file=sys.stderr)
    if result.spack_0x_reading is not None:
        print(
            f"cachetui: in Spack 1.x the tokens after %name constrain that dependency; "
            f"with them on the package it matches: {visible(result.spack_0x_reading)!r}",
            file=sys.stderr,
        )
    return EXIT_OK if packages else EXIT_NO_MATCH


# -- the app ----------------------------------------------------------------------------


def _config(options: argparse.Namespace) -> int:
    """Every setting with its value and where it came from; the config file's problems,
    checked as the app checks them (binding ids, keys that clash, theme names)."""
    from cachetui.app import check_config  # the app's binding ids and themes: imports Textual

    config = load_config(options.config)
    check_config(config)
    rows = describe(config)
    if options.json:
        _print_json(
            {
                "file": str(config.path),
                "settings": [{"key": k, "value": v, "origin": o} for k, v, o in rows],
                "problems": [
                    {"source": p.source, "error": p.message, "severity": p.severity}
                    for p in config.problems
                ],
            }
        )
    else:
        print(
            f"config file: {visible(str(config.path))}"
            + ("" if config.path and config.path.exists() else " (not there: defaults)")
        )
        print(table(("key", "value", "from"), rows))
        _config_problems_to_stderr(config)
    return EXIT_USAGE if config.problems else EXIT_OK


def _set_colors(choice: str) -> None:
    """Textual reads its colour system when it is imported: set it first. An explicit choice
    wins over an inherited NO_COLOR; auto leaves the environment as the user has it."""
    if choice == "none":
        os.environ["NO_COLOR"] = "1"
    elif choice != "auto":
        os.environ.pop("NO_COLOR", None)
        os.environ["TEXTUAL_COLOR_SYSTEM"] = choice


def _run_app(options: argparse.Namespace) -> int:
    from pathlib import Path

    config = load_config(options.config)
    missing = [
        s for s in options.sources if not _URL.match(s) and not Path(s).expanduser().exists()
    ]
    if options.sources and len(missing) == len(
        options.sources
    ):  # (the config file's: load problems, as any)
        raise _UsageError("no such file or directory: " + ", ".join(visible(s) for s in missing))
    if options.color:
        config.color, config.origins["color"] = options.color, ORIGIN_COMMAND_LINE
    if options.no_mouse:
        config.mouse, config.origins["mouse"] = False, ORIGIN_COMMAND_LINE
    _set_colors(config.color)
    # A search result lands a few ms after the search box's own echo has used Textual's
    # frame tick, so at the default 60 frames/s it waited up to 17 ms for the next one.
    # Read by Textual at import; a user's own TEXTUAL_FPS wins.
    os.environ.setdefault("TEXTUAL_FPS", "120")
    from cachetui.app import CacheTUI  # Textual is imported only here, after the colours are set

    app = CacheTUI(service=_service(options, config), config=config)
    app.run(mouse=config.mouse)
    _config_problems_to_stderr(config)  # shown in the app too; here they outlive it
    return app.return_code or 0
