"""The search box's side of the main screen: the text checked as it is typed, the reason it
does not parse, and the hint under the box. Mixed into MainScreen."""

from __future__ import annotations

from typing import TYPE_CHECKING

from textual import on
from textual.content import Content
from textual.widgets import Input

from cachetui.index.query import Query, QueryError, parse_query
from cachetui.textsafe import visible
from cachetui.tui.screens.main_part import MainScreenPart

if TYPE_CHECKING:
    pass


class SearchBox(MainScreenPart):
    @on(Input.Changed, "#search")
    def _search_changed(self, event: Input.Changed) -> None:
        text = event.value
        try:
            parse_query(text)  # cheap, and no index needed: say what is wrong at once
        except QueryError as error:
            # A `/` just typed begins a hash prefix: not wrong, only not finished.
            unfinished_hash = text.endswith("/") and not text[error.start :].strip("/")
            # Meanwhile the list keeps the last valid result.
            self._show_query_error(
                "" if unfinished_hash else f"column {error.start + 1}: {error.message}"
            )
            self._update_search_hint()
            return
        self._show_query_error("")
        if text != self.filter.query:
            self.filter = self.filter.with_query(text)
            self._request()
        self._update_search_hint()

    def _show_query_error(self, error: str) -> None:
        """The box turns red; the status line has room for the reason where a narrow box cuts it."""
        self.query_one("#search").set_class(bool(error), "-invalid")
        if error != self._query_error:
            self._query_error = error
            self._update_status()

    def _update_search_hint(self) -> None:
        """The search box's subtitle: what is wrong with the text, or where enter goes."""
        search = self.query_one("#search", Input)
        text, result = search.value, self.result
        if self._query_error:
            hint = self._query_error
        elif (
            result is not None
            and result.filter.query == text
            and result.spack_0x_reading is not None
        ):
            # (the box has room the status line lacks at 80 columns)
            hint = f"did you mean: {visible(result.spack_0x_reading)}"
        elif text.endswith("/") and parsed(text) is None:  # (`tag=a/` parses: a value)
            hint = "hash lookup: type the first characters of a hash"
        elif result is not None and result.filter.query != text and "/" in text:
            return  # its result is on its way, and updates the hint when it comes
        elif "/" not in text or result is None or not getattr(parsed(text), "hash_prefixes", ()):
            hint = ""
        elif result.matching_specs:
            found = result.matching_specs
            hint = f"{found:,} match{'es' if found != 1 else ''} · enter to go"
        else:
            hint = (
                "none with these filters · enter looks in all"
                if result.filter.selections
                else "no match"
            )
        set_border_title(search, hint, subtitle=True)


def parsed(text: str) -> Query | None:
    try:
        return parse_query(text)
    except QueryError:
        return None


def set_border_title(widget, text: str, subtitle: bool = False) -> None:
    """Set a border title (or subtitle) as plain text, repainting the widget only if it changed.

    A title given as str is parsed as markup, and data must go in as plain Content. Textual
    repaints every line of the widget on each assignment, even of the same text: a keystroke
    that set the same title cost a full repaint of the spec list and the search box.
    """
    attribute = "border_subtitle" if subtitle else "border_title"
    title = Content(visible(text))
    if getattr(widget, attribute) != title.markup:  # the getter gives the title as markup
        setattr(widget, attribute, title)
