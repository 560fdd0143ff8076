"""Two cache tags with every kind of change between them, and their diff written down by
hand: read by unit/test_diff.py (the command line) and ui/test_diff_app.py (the app)."""

from __future__ import annotations

from pathlib import Path

from helpers import fake_hash, record, write_summary

OLD, NEW = "develop-2025-06-01", "develop-2025-07-01"
H = {
    name: fake_hash(n, name[:2])
    for n, name in enumerate(
        ["zl-a", "zl-b", "zl-b2", "zl-c", "nu-d", "cm-e", "op-f", "op-g", "op-h", "m4-m"], start=1
    )
}


def write_pair(root: Path) -> Path:
    """Two tags; per package: unchanged, rebuilt, added, removed, and a pairing by variants."""

    def put(tag: str, package: str, records: list[dict]) -> None:
        write_summary(root / tag / package / "specs.md", package, records, tag=tag)

    put(OLD, "zlib", [record(H["zl-a"], "1.3"), record(H["zl-b"], "1.2")])
    put(
        NEW,
        "zlib",
        [record(H["zl-a"], "1.3"), record(H["zl-b2"], "1.2"), record(H["zl-c"], "1.3.1")],
    )
    put(OLD, "py-numpy", [record(H["nu-d"], "2.1")])
    put(NEW, "cmake", [record(H["cm-e"], "3.30", stacks=("e4s",))])
    # Two openssl builds differing only in variants; the new tag has one, ~shared: it pairs
    # with the old ~shared (rebuilt), and the old +shared is removed.
    put(
        OLD,
        "openssl",
        [
            record(H["op-f"], "3.4", variants=("+shared",)),
            record(H["op-g"], "3.4", variants=("~shared",)),
        ],
    )
    put(NEW, "openssl", [record(H["op-h"], "3.4", variants=("~shared",))])
    put(OLD, "m4", [record(H["m4-m"], "1.4")])
    put(NEW, "m4", [record(H["m4-m"], "1.4")])  # the same hash in both: unchanged, not listed
    return root


EXPECTED = {
    "old": OLD,
    "new": NEW,
    "packages": {
        "cmake": {"added": [H["cm-e"]], "removed": [], "rebuilt": []},
        "openssl": {"added": [], "removed": [H["op-f"]], "rebuilt": [[H["op-g"], H["op-h"]]]},
        "py-numpy": {"added": [], "removed": [H["nu-d"]], "rebuilt": []},
        "zlib": {"added": [H["zl-c"]], "removed": [], "rebuilt": [[H["zl-b"], H["zl-b2"]]]},
    },
}
