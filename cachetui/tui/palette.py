"""The command palette (ctrl+p): the app's and the main screen's key bindings by their
names (the same names the footer and the help show), and commands over the loaded data:
go to a package, toggle a filter value, switch tag, look up a hash, pick a theme.

Bounded by design: packages come from the index's own ranker (a handful, best first), not
from matching every name in Python; facet values and themes are tens to hundreds.
Everything shown is built as plain Content: data is never read as markup.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from functools import partial
from typing import TYPE_CHECKING, Protocol, runtime_checkable

from textual.app import App
from textual.command import DiscoveryHit, Hit, Hits, Provider
from textual.content import Content
from textual.fuzzy import Matcher
from textual.markup import escape
from textual.message import Message
from textual.screen import Screen

from cachetui.index.hashes import HashPrefixError, normalise_hash_prefix
from cachetui.textsafe import visible
from cachetui.tui.messages import CompareTags, GoToPackage, LookUpHash, SwitchTag, ToggleFilter

if TYPE_CHECKING:
    from cachetui.index.filter import Filter, Result
    from cachetui.service import IndexService
    from cachetui.tui.keys import KeyEntry

# Bindings that make no sense as commands: moving focus, leaving the box, the palette itself.
_NOT_COMMANDS = {"focus-next", "focus-previous", "leave-search", "quit-anywhere", "command-palette"}
PACKAGE_HITS = 8


@dataclass(frozen=True)
class Command:
    name: str  # what the palette shows and matches: "Copy hash", "Tag: develop"
    run: Callable[[], object]
    help: str  # the palette reads it as markup: escaped in _help()


@runtime_checkable
class Browsing(Protocol):
    """What the palette reads of the screen it was opened on (the main screen): the loaded
    data and what is shown. What it asks of that screen, it asks by message."""

    service: IndexService
    filter: Filter
    result: Result | None


@runtime_checkable
class KeyedApp(Protocol):
    def key_entries(self) -> list[KeyEntry]: ...


class CacheCommands(Provider):
    def _main(self) -> Browsing | None:
        return self.screen if isinstance(self.screen, Browsing) else None

    def _ask(self, message: Message) -> Callable[[], object]:
        """A command that asks the screen for something (messages up: never a call into it)."""
        return partial(self.screen.post_message, message)

    def _commands(self) -> Iterator[Command]:
        """Every command with a fixed name, in the order an empty palette lists them: the
        app's and the browsing screen's bindings."""
        app, main = self.app, self._main()
        entries = app.key_entries() if isinstance(app, KeyedApp) else []
        for entry in entries:
            if entry.id in _NOT_COMMANDS:
                continue
            if isinstance(app, entry.owner):
                target: App | Screen = app
            elif main is not None and isinstance(main, entry.owner):
                target = self.screen
            else:
                continue  # a widget's binding, or another screen's
            yield Command(
                entry.description,
                partial(target.run_action, entry.action),
                _help(f"{entry.tooltip} · {entry.keys}"),
            )
        yield from self._tag_commands()
        for name in sorted(app.available_themes):
            yield Command(
                f"Theme: {name}",
                partial(setattr, app, "theme", name),
                "the current theme" if name == app.theme else "use this theme (remembered)",
            )

    def _tag_commands(self) -> Iterator[Command]:
        """Switch tag, where there is more than one to switch between."""
        main = self._main()
        index = main.service.index if main is not None else None
        if main is None or index is None:
            return
        tags, counts = (
            index.facet_values.get("tag", []),
            main.result.facet_counts.get("tag", {}) if main.result else {},
        )
        chosen = main.filter.selected.get("tag", frozenset())
        if len(tags) > 1 or chosen:
            for tag in tags:
                now = " (shown now)" if chosen == {tag} else ""
                yield Command(
                    f"Tag: {visible(tag)}",
                    self._ask(SwitchTag(tag)),
                    f"show this cache tag only{now} · {counts.get(tag, 0):,} specs",
                )
            yield Command(
                "All tags",
                self._ask(SwitchTag(None)),
                "show every cache tag" + (" (shown now)" if not chosen else ""),
            )

    def _facet_commands(self) -> Iterator[Command]:
        main = self._main()
        if main is None or main.service.index is None or main.result is None:
            return
        index, counts, selected = main.service.index, main.result.facet_counts, main.filter.selected
        offers_tags = len(index.facet_values.get("tag", [])) > 1 or "tag" in selected
        for facet in index.facets:
            if facet == "tag" and offers_tags:
                continue  # "Tag: develop" says it (and switches, which is what a tag is for)
            for value in index.facet_values.get(facet, []):
                on = value in selected.get(facet, ())
                count = counts.get(facet, {}).get(value, 0)
                state = (
                    f"on: turn it off · {count:,} specs" if on else f"turn it on · {count:,} specs"
                )
                yield Command(
                    f"Filter: {facet}={visible(value)}",
                    self._ask(ToggleFilter(facet, value)),
                    state,
                )

    async def discover(self) -> Hits:
        for command in self._commands():
            yield DiscoveryHit(
                Content(command.name), command.run, text=command.name, help=command.help
            )

    async def search(self, query: str) -> Hits:
        matcher = self.matcher(query)
        for command in [*self._commands(), *self._facet_commands()]:
            score = matcher.match(command.name)
            if score > 0:
                yield Hit(
                    score,
                    _highlighted(matcher, command.name),
                    command.run,
                    text=command.name,
                    help=command.help,
                )
        for hit in self._hash_hits(query):
            yield hit
        for hit in self._package_hits(query):
            yield hit

    def _package_hits(self, query: str) -> Iterator[Hit]:
        main = self._main()
        words = _without_word(query, "package")
        if main is None or main.service.index is None or len(words) < 2:
            return
        index, matcher = main.service.index, Matcher(words)
        for place, package in enumerate(index.package_ranker.rank(words)[:PACKAGE_HITS]):
            name = index.packages[package]
            label = f"Package: {visible(name)}"
            # The palette orders by score: the matcher's own (unbounded) score, lifted by the
            # ranker's order so that an exact name or a typo-tolerant match is not buried.
            lift = 20 if name.lower() == words.lower() else 8 - place
            yield Hit(
                matcher.match(label) + lift,
                _highlighted(matcher, label),
                self._ask(GoToPackage(package)),
                text=label,
                help="go to this package",
            )

    def _hash_hits(self, query: str) -> Iterator[Hit]:
        main = self._main()
        text = _without_word(query, "hash")
        if main is None or main.service.index is None:
            return
        try:
            prefix = normalise_hash_prefix(text)
        except HashPrefixError:
            return
        if not text.startswith("/") and (len(prefix) < 3 or not any(c.isdigit() for c in prefix)):
            # A word ("tag", "copy") is meant more often than a hash: hashes typed bare need
            # a digit.
            return
        found = len(main.service.index.lookup_hash(prefix))
        if found:
            label = f"Hash: /{prefix}"
            yield Hit(
                100 if text.startswith("/") else 30,
                Content(label),
                self._ask(LookUpHash(prefix)),
                text=label,
                help=(
                    "go to the spec whose hash starts with it "
                    f"({found:,} match{'es' if found != 1 else ''})"
                ),
            )


def _help(text: str) -> str:
    """Help text as markup that shows `text` as it is (a keymap's keys are the user's text)."""
    return escape(visible(text))


def _without_word(query: str, word: str) -> str:
    """`package zlib` and `package: zlib` are `zlib` to the package commands."""
    text = query.strip()
    if text.lower().startswith(word):
        text = text[len(word) :].lstrip(": ")
    return text


def _highlighted(matcher: Matcher, text: str) -> Content:
    """`text` as plain Content (never markup), the characters the matcher matched styled."""
    content = Content(text)
    score, offsets = matcher.fuzzy_search.match(matcher.query, text)
    if score:
        for offset in offsets:
            if not text[offset].isspace():
                content = content.stylize(matcher.match_style, offset, offset + 1)
    return content


class TagCommands(CacheCommands):
    """The tag switcher (`t`): the palette with the tags only."""

    def _commands(self) -> Iterator[Command]:
        return self._tag_commands()

    def _facet_commands(self) -> Iterator[Command]:
        return iter(())

    def _package_hits(self, query: str) -> Iterator[Hit]:
        return iter(())

    def _hash_hits(self, query: str) -> Iterator[Hit]:
        return iter(())


class CompareCommands(TagCommands):
    """The tag comparison (`c`): every ordered pair of loaded tags."""

    def _commands(self) -> Iterator[Command]:
        main = self._main()
        index = main.service.index if main is not None else None
        if main is None or index is None:
            return
        tags = index.facet_values.get("tag", [])
        for old in tags:
            for new in tags:
                if old != new:
                    ready = main.service.comparisons.known(index, old, new) is not None
                    yield Command(
                        f"Compare: {visible(old)} -> {visible(new)}",
                        self._ask(CompareTags(old, new)),
                        "what changed: specs added, removed, rebuilt"
                        + (" (worked out: instant)" if ready else ""),
                    )
