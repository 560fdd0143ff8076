"""What the search text matched, for the lists to highlight: characters of a package name,
the start of a hash, the columns a constraint tested, the variants and stacks it named.

Plain Python and no index: lists ask for the rows on screen only, as they paint them.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

from cachetui.index.fuzzy import FUZZY_MIN_LENGTH
from cachetui.index.query import Query, QueryError, Variant, parse_query, variant_values

Span = tuple[int, int]  # [start, end) in characters

# The query fields that name a spec column; `stack` and `tag` among them.
_COLUMNS_OF_FIELDS = {"platform", "os", "target", "stack", "tag", "kind"}


@dataclass(frozen=True)
class SpecMarks:
    """What a query marks in a spec: the start of its hash, the columns a constraint tested,
    the stacks and variants it named. A value: two queries that mark specs alike are equal,
    so the spec list and the detail pane repaint only when the marks change, not with every
    letter of a package name."""

    hash_prefixes: tuple[str, ...] = ()
    columns: frozenset[str] = frozenset()
    stacks: frozenset[str] = frozenset()
    variants: tuple[Variant, ...] = ()

    @classmethod
    def of(cls, query: Query) -> SpecMarks:
        columns = {c for c, _ in query.fields if c in _COLUMNS_OF_FIELDS}
        columns.update(("version",) if query.versions else ())
        columns.update(("compiler",) if query.compilers else ())
        stacks = frozenset(v for c, v in query.fields if c == "stack")
        return cls(query.hash_prefixes, frozenset(columns), stacks, query.variants)

    def hash_length(self, full_hash: str) -> int:
        """How many leading characters of `full_hash` a `/prefix` matched."""
        return max((len(p) for p in self.hash_prefixes if full_hash.startswith(p)), default=0)

    def variant_matches(self, variant: str) -> bool:
        """Whether a spec's variant (`+mpi`, `libs=shared,static`) is one the query asked for."""
        if not self.variants:
            return False
        held = variant_values((variant,))
        return any(v.name in held and v.held_by(held[v.name]) for v in self.variants)


NO_MARKS = SpecMarks()


class Highlight:
    """The highlights of one query: the characters of package names it matched, and `spec`,
    its marks in specs. Made once per search text (see `highlight_for`)."""

    def __init__(self, query: Query | None = None) -> None:
        self._name = query.name_text.strip().lower() if query else ""
        self._globs = [g.lower() for g in query.globs if g.strip("*")] if query else []
        self.spec = SpecMarks.of(query) if query else NO_MARKS
        self._names: dict[str, tuple[Span, ...]] = {}

    def __bool__(self) -> bool:
        return bool(self._name or self._globs or self.spec != NO_MARKS)

    def name_spans(self, name: str) -> tuple[Span, ...]:
        """The characters of `name` the search words matched, as the ranker matched them."""
        spans = self._names.get(name)
        if spans is None:
            lower = name.lower()
            if len(lower) != len(name):  # `İ` lowers to two characters: spans would land one off
                spans = ()
            else:
                spans = _merge(
                    self._word_spans(lower)
                    + [span for glob in self._globs for span in _glob_spans(glob, lower)]
                )
            self._names[name] = spans
        return spans

    def _word_spans(self, name: str) -> list[Span]:
        query = self._name
        if not query:
            return []
        at = name.find(query)
        if at >= 0:  # exact, prefix and substring tiers
            return [(at, at + len(query))]
        if len(query) < FUZZY_MIN_LENGTH:
            return []
        from rapidfuzz.distance import Indel  # the fuzzy tier scores by Indel: show what it kept

        return [
            (block.dest_start, block.dest_end)
            for block in Indel.opcodes(query, name)
            if block.tag == "equal"
        ]


NO_HIGHLIGHT = Highlight()


@lru_cache(maxsize=16)
def highlight_for(text: str) -> Highlight:
    """The highlights of a search text; the same object while the text is the same (so a list
    that is shown the same text again knows nothing changed)."""
    try:
        return Highlight(parse_query(text))
    except QueryError:
        return NO_HIGHLIGHT


def _glob_spans(glob: str, name: str) -> list[Span]:
    """The literal runs of a name pattern (`py-*`: the query language has only `*`) in `name`,
    when it matches. Each run is taken leftmost after the one before, the last one at the end:
    linear, where a regex of `.*` can backtrack exponentially on `a*a*a*...`."""
    runs = glob.split("*")
    first, last = runs[0], runs[-1]
    if (
        len(runs) == 1
        or not name.startswith(first)
        or not name.endswith(last)
        or len(first) + len(last) > len(name)
    ):
        return []
    spans = [(0, len(first))] if first else []
    at, end = len(first), len(name) - len(last)
    for run in runs[1:-1]:
        if run:
            found = name.find(run, at, end)
            if found < 0:
                return []
            spans.append((found, found + len(run)))
            at = found + len(run)
    return spans + ([(end, len(name))] if last else [])


def _merge(spans: list[Span]) -> tuple[Span, ...]:
    merged: list[Span] = []
    for start, end in sorted(spans):
        if merged and start <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(end, merged[-1][1]))
        else:
            merged.append((start, end))
    return tuple(merged)
