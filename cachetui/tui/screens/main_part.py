"""What the main screen's parts (main_loading, main_search, main_actions) may use of it: said
once, for the type checker. MainScreen sets and defines each of these."""

from __future__ import annotations

from typing import TYPE_CHECKING

from textual.screen import Screen

if TYPE_CHECKING:
    from cachetui.index.filter import Filter, Result
    from cachetui.service import IndexService


class MainScreenPart(Screen):
    if TYPE_CHECKING:
        service: IndexService
        filter: Filter
        result: Result | None
        _loading: str
        _query_error: str
        _compare_wanted: tuple[str, str] | None

        def jump_to(self, row: int, why: str = ...) -> None: ...
        def _apply(self, result: Result | None) -> None: ...
        def _request(self) -> None: ...
        def _update_status(self) -> None: ...
