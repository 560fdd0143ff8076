"""How specs and results are written for scripts (JSON) and for people (aligned text).

The JSON shapes are public contracts: extend them, never break them.
"""

from __future__ import annotations

import os
import re
import stat
import tempfile
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

from cachetui.model import NO_COMPILER, LoadProblem, NodeKind
from cachetui.spack_format import spec_line
from cachetui.textsafe import visible

if TYPE_CHECKING:  # the index brings numpy: not before the first frame
    from cachetui.config import ConfigProblem
    from cachetui.index.graph import Dependency
    from cachetui.index.store import Index
    from cachetui.service.check import CheckReport, Difference, SpecCheck


def spec_json(index: Index, row: int) -> dict[str, Any]:
    spec = index.spec(row)
    return {
        "package": spec.package,
        "version": spec.version,
        "compiler": None if spec.compiler == NO_COMPILER else spec.compiler,
        "platform": spec.platform,
        "os": spec.os,
        "target": spec.target,
        "hash": spec.hash,
        "variants": list(spec.variants),
        "stacks": list(spec.stacks),
        "tag": spec.tag,
        "size": spec.size,
        "tarball": spec.tarball,
        "source": spec.source,
        "kind": spec.kind,
        **_mirror_files(index, row),
    }


def spec_record(index: Index, row: int) -> dict[str, Any]:
    """Everything known of one spec: its JSON, install command and dependencies (as `deps
    --json` gives them; null where its source lists none). What the pager shows."""
    from cachetui.index.deps import dependencies_of  # numpy: not before it is asked for

    record = {**spec_json(index, row), "install": index.spec(row).install_command}
    found = dependencies_of(index, row)
    record["dependencies"] = (
        None
        if found is None
        else [edge_json(line.dependency, line.depth, line.repeated) for line in found.tree]
    )
    record["build"] = None if found is None else [edge_json(d, 1, False) for d in found.build]
    return record


def edge_json(dependency, depth: int, repeated: bool) -> dict[str, Any]:
    """One dependency line of `deps --json` (a public shape)."""
    return {
        "name": dependency.name,
        "version": dependency.version or None,
        "hash": dependency.hash,
        "deptypes": dependency.deptype_names,
        "virtuals": list(dependency.virtuals),
        "kind": dependency.kind_name,
        "depth": depth,
        "repeated": repeated,
    }


_JSON_UNSAFE = re.compile("[\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")


def json_text(value: object) -> str:
    """Indented JSON that is safe on a terminal. Control characters are escaped by the
    encoder; C1 controls and bidi marks are escaped too, so the decoded data stays exact.
    msgspec encodes and indents in C, the same text as `json.dumps(indent=2,
    ensure_ascii=False)`, whose indenting is pure Python (0.5 s for `check --json` of a
    thousand specs)."""
    import msgspec

    text = msgspec.json.format(msgspec.json.encode(value), indent=2).decode("utf-8")
    return _JSON_UNSAFE.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


CSV_COLUMNS = (
    "package",
    "version",
    "compiler",
    "platform",
    "os",
    "target",
    "hash",
    "variants",
    "stacks",
    "tag",
    "size",
    "tarball",
    "source",
    "kind",
)
EXPORT_FORMATS = {"csv": "CSV", "json": "JSON", "specs": "Spack spec lines"}


def write_csv(index: Index, rows: Iterable[int], out: IO[str]) -> None:
    """A header, then one line a spec; variants and stacks space-separated; an unknown size or
    compiler empty. Cells are made terminal-safe like text output (CSV has no escapes of its
    own)."""
    import csv

    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(CSV_COLUMNS)
    for row in rows:
        record = spec_json(index, row)
        cells = [
            " ".join(v) if isinstance(v, list) else "" if v is None else str(v)
            for v in (record[c] for c in CSV_COLUMNS)
        ]
        writer.writerow([visible(cell) for cell in cells])


def write_spec_lines(index: Index, rows: Iterable[int], out: IO[str]) -> None:
    """`name@version<variants> arch=platform-os-target /hash %compiler`, one a line: what
    Spack 1.x reads back as exactly that spec (spack_format.py)."""
    for row in rows:
        out.write(visible(spec_line(index, row)) + "\n")


def write_export(
    index: Index, rows: list[int], form: str, out: IO[str], filter_json: dict | None = None
) -> None:
    """The app's export (`e`): `form` one of EXPORT_FORMATS. JSON is
    `{"filter": ..., "specs": [spec, ...]}`."""
    if form == "csv":
        write_csv(index, rows, out)
    elif form == "specs":
        write_spec_lines(index, rows, out)
    else:
        out.write(
            json_text(
                {"filter": filter_json or {}, "specs": [spec_json(index, row) for row in rows]}
            )
            + "\n"
        )


@contextmanager
def replacing(path: Path) -> Iterator[IO[str]]:
    """A text file to write that replaces `path` only once it is whole (a temporary file beside
    it, renamed). A symlink is written through; the mode is the file's own, else the umask's."""
    target = Path(path).resolve()
    handle, temporary = tempfile.mkstemp(
        dir=target.parent, prefix=f".{target.name}.", suffix=".tmp"
    )
    try:
        with os.fdopen(handle, "w", encoding="utf-8", newline="") as out:
            yield out
        mode = stat.S_IMODE(target.stat().st_mode) if target.exists() else 0o666 & ~_umask()
        os.chmod(temporary, mode)
        os.replace(temporary, target)
    except BaseException:
        with suppress(OSError):
            os.unlink(temporary)
        raise


def _umask() -> int:
    """The process umask (read by setting it: there is no other way; set straight back)."""
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def _mirror_files(index: Index, row: int) -> dict[str, str]:
    """Where a build-cache binary's spec file (v2) or spec manifest (v3) is; nothing for
    summaries."""
    files = index.binary_files(row)
    return {
        key: url
        for key, url in (("spec_file", files.spec_file), ("manifest", files.manifest))
        if url
    }


SPEC_COLUMNS = ("hash", "package", "compiler", "arch", "tag", "stacks")


def spec_cells(index: Index, row: int) -> tuple[str, ...]:
    return (
        index.hashes[row],
        f"{index.package_name(row)}@{index.field('version', row)}",
        index.field("compiler", row),
        f"{index.field('platform', row)}-{index.field('os', row)}-{index.field('target', row)}",
        index.field("tag", row),
        ",".join(index.stacks(row)),
    )


def table(header: Sequence[str], rows: Iterable[Sequence[str]], right: Sequence[int] = ()) -> str:
    """An aligned plain-text table; every cell is made terminal-safe."""
    cells = [[visible(str(c)) for c in header]] + [[visible(str(c)) for c in row] for row in rows]
    widths = [max(len(row[i]) for row in cells) for i in range(len(header))]
    lines = []
    for row in cells:
        parts = [
            cell.rjust(w) if i in right else cell.ljust(w)
            for i, (cell, w) in enumerate(zip(row, widths))
        ]
        lines.append("  ".join(parts).rstrip())
    return "\n".join(lines)


def size_text(size: int | None) -> str:
    if size is None:
        return "unknown"
    value = float(size)
    for unit in ("B", "KiB", "MiB", "GiB"):
        if value < 1024 or unit == "GiB":
            return f"{size:,} B" if unit == "B" else f"{value:.1f} {unit} ({size:,} B)"
        value /= 1024
    return f"{size:,} B"


def dependency_label(dependency: Dependency) -> str:
    """`name@version /hash7`: how a dependency is named to people."""
    label = f"{dependency.name}@{dependency.version}" if dependency.version else dependency.name
    return f"{label} /{dependency.hash[:7]}"


def why_no_spec(index: Index, dependency: Dependency) -> str:
    """Why a dependency has no spec among the loaded ones to go to, in the user's terms."""
    label, kind = dependency_label(dependency), dependency.kind
    if kind == NodeKind.EXTERNAL:
        path = index.graph.external_path(dependency.node) if index.graph else None
        where = f" ({path})" if path else ""
        return f"{label} is an external{where}, not a binary in the loaded caches"
    if kind == NodeKind.NOT_IN_CACHE:
        return f"{label} is not in the build cache: its index records it, without a binary"
    if kind == NodeKind.DEPENDENCY_ONLY:
        return (
            f"{label} is only named as a dependency in a spec file, "
            "not a binary in the loaded caches"
        )
    return f"{label} is not in the loaded caches"


def download_text(url: str, done: int, total: int | None) -> str:
    """A download under way, in a line: `downloading index.json: 1.2 of 3.4 MB`."""
    name = visible(url.rstrip("/").rsplit("/", 1)[-1][:40])
    of = f" of {total / 1e6:,.1f}" if total else ""
    return f"downloading {name}: {done / 1e6:,.1f}{of} MB"


def problem_json(problem: LoadProblem | ConfigProblem) -> dict[str, str]:
    """One load or config problem in JSON output (a public shape)."""
    return {"source": problem.source, "error": problem.message, "severity": problem.severity}


def check_json(index: Index, report: CheckReport) -> dict[str, Any]:
    """`check --json` (a public shape): the summary, then each spec of the environment."""
    environment = report.environment
    return {
        "environment": environment.path,
        "source": environment.source,
        "format": environment.format,
        "summary": {
            "specs": len(report.checks),
            "hits": report.count("hit"),
            "misses": report.count("miss"),
            "externals": report.count("external"),
            "roots": report.roots,
            "roots_covered": report.roots_covered,
            "download_bytes": report.download_bytes,
            "sizes_known": report.sizes_known,
        },
        "specs": [_spec_check_json(index, check) for check in report.checks],
    }


def tags_and_stacks(index: Index, rows: Iterable[int]) -> dict[str, list[str]]:
    """tag -> the stacks holding the spec there (sorted), for the rows of one hash."""
    stacks: dict[str, set[str]] = {}
    for row in rows:
        stacks.setdefault(index.field("tag", row), set()).update(index.stacks(row))
    return {tag: sorted(names) for tag, names in stacks.items()}


def counted(count: int, noun: str) -> str:
    """`1 miss`, `2 misses`, `3 differences`: English plurals for the nouns said here."""
    if count == 1:
        return f"1 {noun}"
    return f"{count} {noun}es" if noun.endswith(("s", "sh", "ch", "x")) else f"{count} {noun}s"


def _spec_check_json(index: Index, check: SpecCheck) -> dict[str, Any]:
    spec = check.spec
    return {
        "hash": spec.hash,
        "name": spec.name,
        "version": spec.version,
        "root": spec.root,
        "status": check.status,
        "in": [
            {"tag": tag, "stacks": names}
            for tag, names in tags_and_stacks(index, check.rows).items()
        ],
        "nearest": [
            {
                "hash": near.hash,
                "name": near.name,
                "version": near.version,
                "tag": index.field("tag", near.row),
                "differences": [_difference_json(d) for d in near.differences],
                "note": near.note,
            }
            for near in check.nearest
        ],
    }


def _difference_json(difference: Difference) -> dict[str, Any]:
    out: dict[str, Any] = {
        "field": difference.field,
        "yours": difference.yours,
        "cache": difference.cache,
    }
    if difference.path:
        out["path"] = list(difference.path)
    return out


def difference_text(difference: Difference) -> str:
    """`variant:cuda +cuda vs ~cuda`, `dependency:zlib-ng (via libxml2) +shared vs ~shared`:
    one difference for people (not yet made terminal-safe)."""
    via = f" (via {' > '.join(difference.path[:-1])})" if len(difference.path) > 1 else ""
    yours = "(none)" if difference.yours is None else difference.yours
    cache = "(none)" if difference.cache is None else difference.cache
    return f"{difference.field}{via}: {yours} vs {cache}"


def check_summary_text(report: CheckReport) -> str:
    """`38 of 40 specs from the cache (2 misses, 2 externals); 1 of 3 roots wholly from the
    cache; download 1.2 GiB`: `check`'s last line, and the coverage screen's."""
    hits, misses, externals = (report.count(s) for s in ("hit", "miss", "external"))
    text = (
        f"{hits} of {counted(hits + misses, 'spec')} from the cache "
        f"({counted(misses, 'miss')}, {counted(externals, 'external')}); "
        f"{report.roots_covered} of {counted(report.roots, 'root')} wholly from the cache"
    )
    if report.sizes_known:
        known = "" if report.sizes_known == hits else f", {report.sizes_known} of {hits} known"
        text += f"; download {size_text(report.download_bytes).split(' (')[0]}{known}"
    return text
