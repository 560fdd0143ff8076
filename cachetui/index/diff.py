"""What changed between two sets of specs (two cache tags, or two sources), per package:
specs added, removed, and rebuilt (the same name, version, compiler and arch, a new hash).

Rebuilt pairs are matched within one (name, version, compiler, arch): first an old and a new
spec with the same variants, then the rest in hash order. What is left unpaired is added or
removed. A hash in both sets is unchanged (a hash names one build). No Textual here.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from cachetui.index.store import Index


@dataclass(frozen=True)
class Side:
    """One side of a comparison: some rows of an index, and the name to show for them."""

    label: str
    index: Index
    rows: list[int]


@dataclass
class PackageDiff:
    added: list[str] = field(default_factory=list)  # hashes
    removed: list[str] = field(default_factory=list)
    rebuilt: list[tuple[str, str]] = field(default_factory=list)  # (old hash, new hash)

    def __bool__(self) -> bool:
        return bool(self.added or self.removed or self.rebuilt)


@dataclass
class TagDiff:
    old: Side
    new: Side
    packages: dict[str, PackageDiff]  # changed packages only, by name
    old_rows: dict[str, int] = field(default_factory=dict)  # hash -> its row on the old side
    new_rows: dict[str, int] = field(default_factory=dict)

    def to_json(self) -> dict:
        """The `diff --json` shape (a public contract)."""
        return {
            "old": self.old.label,
            "new": self.new.label,
            "packages": {
                name: {
                    "added": d.added,
                    "removed": d.removed,
                    "rebuilt": [list(pair) for pair in d.rebuilt],
                }
                for name, d in self.packages.items()
            },
        }

    def summary(self) -> str:
        """`4 packages changed; 2 specs added, 2 removed, 2 rebuilt`, for people."""
        added, removed, rebuilt = self.totals()
        packages = len(self.packages)
        return (
            f"{packages:,} package{'s' if packages != 1 else ''} changed; "
            f"{added:,} spec{'s' if added != 1 else ''} added, "
            f"{removed:,} removed, {rebuilt:,} rebuilt"
        )

    def totals(self) -> tuple[int, int, int]:
        """(added, removed, rebuilt) over every package."""
        return (
            sum(len(d.added) for d in self.packages.values()),
            sum(len(d.removed) for d in self.packages.values()),
            sum(len(d.rebuilt) for d in self.packages.values()),
        )


def _builds(index: Index, rows: list[int]) -> dict[str, dict[tuple, dict[str, tuple]]]:
    """package -> (version, compiler, platform, os, target) -> hash -> variants."""
    out: dict = defaultdict(lambda: defaultdict(dict))
    field_of = index.field
    for row in rows:
        build = tuple(
            field_of(column, row) for column in ("version", "compiler", "platform", "os", "target")
        )
        out[index.package_name(row)][build][index.hashes[row]] = index.variants(row)
    return out


def diff(old: Side, new: Side) -> TagDiff:
    # Between two snapshots most hashes are in both, and a hash names one build: only the
    # other rows need their builds read (2 x 500k specs: 6.3 s when every row was read).
    old_rows = {old.index.hashes[row]: row for row in old.rows}
    new_rows = {new.index.hashes[row]: row for row in new.rows}
    before = _builds(old.index, [row for digest, row in old_rows.items() if digest not in new_rows])
    after = _builds(new.index, [row for digest, row in new_rows.items() if digest not in old_rows])
    packages: dict[str, PackageDiff] = {}
    for name in sorted(set(before) | set(after)):
        change = PackageDiff()
        old_builds, new_builds = before.get(name, {}), after.get(name, {})
        for build in set(old_builds) | set(new_builds):
            gone, came = dict(old_builds.get(build, {})), dict(new_builds.get(build, {}))
            for old_hash, new_hash in _pairs(gone, came):
                change.rebuilt.append((old_hash, new_hash))
                del gone[old_hash], came[new_hash]
            change.removed += gone
            change.added += came
        change.added.sort()
        change.removed.sort()
        change.rebuilt.sort()
        if change:
            packages[name] = change
    return TagDiff(old, new, packages, old_rows, new_rows)


def _pairs(gone: dict[str, tuple], came: dict[str, tuple]) -> list[tuple[str, str]]:
    """Old and new hashes of one build paired up: same variants first, then in hash order."""
    pairs, free_new = [], sorted(came)
    for old_hash in sorted(gone):
        same = next((h for h in free_new if came[h] == gone[old_hash]), None)
        if same is not None:
            pairs.append((old_hash, same))
            free_new.remove(same)
    paired_old = {old for old, _ in pairs}
    pairs += zip((h for h in sorted(gone) if h not in paired_old), free_new)
    return pairs
