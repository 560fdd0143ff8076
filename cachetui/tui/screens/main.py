"""The main screen: facets | search + packages | specs + detail, a status line, a footer.

Below 120 columns the filters and the detail pane fold away (f and d bring them back); at
120 and wider everything shows at once. Folding is two reactives that toggle CSS classes.

It owns the flow: loading runs in a thread worker that posts progress; each change of
search text or facets claims a generation number from the service and evaluates in an
exclusive worker; a result that is no longer current is dropped, never shown.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical
from textual.events import Resize
from textual.reactive import var
from textual.screen import Screen
from textual.widget import Widget
from textual.widgets import Footer, Input, Static

from cachetui.config.sources import CHOSEN_BY_DEFAULT
from cachetui.index.filter import Filter, Result
from cachetui.index.highlight import highlight_for
from cachetui.index.query import QueryError
from cachetui.output import why_no_spec
from cachetui.service import IndexService
from cachetui.service.reveal import reveal
from cachetui.textsafe import visible
from cachetui.tui.messages import (
    CompareTags,
    GoToPackage,
    LookUpHash,
    QueryRejected,
    ResultReady,
    SwitchTag,
    ToggleFilter,
)
from cachetui.tui.screens.hash_lookup import HashLookupScreen
from cachetui.tui.screens.main_actions import CoverageActions, SpecActions, TagActions
from cachetui.tui.screens.main_keys import MAIN_BINDINGS
from cachetui.tui.screens.main_loading import Loading
from cachetui.tui.screens.main_search import SearchBox, parsed, set_border_title
from cachetui.tui.screens.problems import ProblemsScreen
from cachetui.tui.widgets.dependency_list import DependencyList
from cachetui.tui.widgets.facet_sidebar import FacetSidebar
from cachetui.tui.widgets.line_list import LineList
from cachetui.tui.widgets.package_list import PackageList
from cachetui.tui.widgets.safe_input import SafeInput
from cachetui.tui.widgets.spec_detail import SpecDetail
from cachetui.tui.widgets.spec_list import SpecList
from cachetui.tui.widgets.stats_view import StatsView

if TYPE_CHECKING:  # the index brings numpy: not before the first frame
    pass

# At this width and wider, the filters, the lists and the detail pane all fit side by side.
WIDE = 120


class MainScreen(Loading, SearchBox, SpecActions, TagActions, CoverageActions, Screen):
    HELP_GROUP = "main"
    HORIZONTAL_BREAKPOINTS = [(0, "-narrow"), (WIDE, "-wide")]
    BINDINGS = MAIN_BINDINGS
    # Shown or folded away; set from the width when it crosses WIDE, and by f and d.
    filters_shown = var(True, init=False)
    detail_shown = var(True, init=False)
    stats_shown = var(False, init=False)  # the stats view in place of the lists

    def __init__(self, service: IndexService) -> None:
        super().__init__()
        self.service = service
        self.filter = Filter()
        self.result: Result | None = None
        self._shown: tuple[int | None, Result | None] = (None, None)
        self._loading = "starting…"
        self._query_error = ""  # why the search text does not parse, while it does not
        self._wide: bool | None = None  # the width class the panes were last laid out for
        self._compare_wanted: tuple[str, str] | None = None

    def compose(self) -> ComposeResult:
        with Horizontal(id="body"):
            yield FacetSidebar(id="facets")
            with Vertical(id="centre"):
                # SafeInput: a pasted escape or bidi override is echoed visibly, never raw.
                yield SafeInput(
                    placeholder="search: zlib@1.3 %gcc +shared os=… or /hash", id="search"
                )
                yield PackageList(id="packages")
            with Vertical(id="right"):
                yield SpecList(id="specs")
                yield SpecDetail(id="detail")
            yield StatsView(id="stats")
        yield Static(id="status")
        yield Footer(compact=True)

    def on_mount(self) -> None:
        self._fit_width(self.app.size.width)
        self.query_one("#facets").border_title = "Filters"
        self.query_one("#packages").border_title = "Packages"
        self.query_one("#specs").border_title = "Specs"
        self.query_one("#detail").border_title = "Detail"
        self.query_one("#stats").border_title = "Stats"
        # Start in the list, so `/`, `?`, j/k and q work at once (`/` goes to the search box).
        self.query_one(PackageList).focus()
        self._update_status()
        self._load()

    # -- layout -------------------------------------------------------------------------

    def on_resize(self, event: Resize) -> None:
        self._fit_width(event.size.width)

    def _fit_width(self, width: int) -> None:
        """Crossing WIDE lays the panes out for the new width: all shown, or folded."""
        wide = width >= WIDE
        if wide != self._wide:
            self._wide = wide
            self.filters_shown = self.detail_shown = wide

    def watch_filters_shown(self, shown: bool) -> None:
        self.set_class(not shown, "-filters-hidden")
        self._leave_if_hidden("#facets", shown, "#packages")
        self._update_status()

    def watch_detail_shown(self, shown: bool) -> None:
        self.set_class(not shown, "-detail-hidden")
        self._leave_if_hidden("#detail", shown, "#specs")

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "focus_search" and isinstance(self.focused, Input):
            return False  # `/` is text there (`/2feova4` in the search box)
        return True

    def _focus(self, widget: Widget) -> None:
        """Move the focus now, not at the next idle as Widget.focus does: keys that came in
        the same burst as this one (a paste, typing over a slow SSH link, a browser's
        websocket frame) then go where this key sent them (`/safet` typed into the search
        box, not `e` for export to the package list)."""
        self.set_focus(widget)

    def _leave_if_hidden(self, pane: str, shown: bool, to: str) -> None:
        """Folding the pane that has the focus hands it on to `to`."""
        if not shown and self.query_one(pane).has_focus_within:
            self._focus(self.query_one(to))

    def action_toggle_filters(self) -> None:
        self.filters_shown = not self.filters_shown
        if self.filters_shown:
            self._focus(self.query_one(FacetSidebar))  # shown to be used

    def action_toggle_detail(self) -> None:
        self.detail_shown = not self.detail_shown

    def action_toggle_stats(self) -> None:
        self.stats_shown = not self.stats_shown

    def watch_stats_shown(self, shown: bool) -> None:
        self.set_class(shown, "-stats")
        if shown:
            self._request_stats()
            self._focus(self.query_one(StatsView))
        elif self.focused is None or self.focused.id == "stats":
            self._focus(self.query_one(PackageList))

    def _request_stats(self) -> None:
        index = self.service.index
        if index is None or self.result is None:
            self.query_one(StatsView).show(None, "Stats")
            return
        self._summarize(index, self.result)

    @work(thread=True, exclusive=True, group="stats")
    def _summarize(self, index, result: Result) -> None:
        from cachetui.index.stats import summarize  # numpy: in the worker

        summary = summarize(index, result.mask)
        self.app.call_from_thread(self._show_stats, result, summary)

    def _show_stats(self, result: Result, summary) -> None:
        from cachetui.index.stats import title_for

        if result is self.result:  # a newer result has its own summary on the way
            self.query_one(StatsView).show(summary, title_for(result.filter))

    # -- filtering ----------------------------------------------------------------------

    def _request(self) -> None:
        if self.service.index is None:
            return
        self._evaluate(self.filter, self.service.next_generation())

    @work(thread=True, exclusive=True, group="filter")
    def _evaluate(self, flt: Filter, generation: int) -> None:
        try:
            result = self.service.evaluate(flt, generation)
        except QueryError as error:  # parsed as typed; this is what the sources cannot answer
            self.post_message(QueryRejected(flt.query, error.message, error.start, generation))
            return
        if result is not None:
            self.post_message(ResultReady(result, generation))

    def on_result_ready(self, message: ResultReady) -> None:
        if self.service.is_current(message.generation):
            self._apply(message.result)

    def on_query_rejected(self, message: QueryRejected) -> None:
        # The last valid result stays, as for a query that does not parse.
        if (
            self.service.is_current(message.generation)
            and message.text == self.query_one("#search", Input).value
        ):
            self._show_query_error(f"column {message.start + 1}: {message.reason}")
            self._update_search_hint()

    def _apply(self, result: Result | None) -> None:
        if result is None:
            return
        index = self.service.index
        if index is None:
            return
        self.result = result
        self.query_one(FacetSidebar).show(index, result)
        self.query_one(PackageList).show(index, result, highlight_for(result.filter.query))
        self._update_status()
        self._update_search_hint()
        if self.stats_shown:
            self._request_stats()
        # The spec list and the detail follow a frame later: while typing, the eye is on the
        # list, the counts and the status line, and alone they paint a few ms sooner.
        self.call_after_refresh(
            lambda: self._show_package(self.query_one(PackageList).highlighted_package)
        )

    def _show_package(self, package: int | None) -> None:
        index, specs = self.service.index, self.query_one(SpecList)
        if (
            index is None
            or self.result is None
            or (package == self._shown[0] and self.result is self._shown[1])
        ):
            return  # already showing it
        self._shown = (package, self.result)
        rows = [] if package is None else index.rows_in_package(package, self.result.mask)
        set_border_title(
            specs, "Specs" if package is None else f"Specs of {index.packages[package]}"
        )
        marks = highlight_for(self.result.filter.query).spec
        specs.show(index, rows, marks)
        detail = self.query_one(SpecDetail)
        detail.marks = marks
        detail.row = specs.highlighted_row

    def _update_status(self) -> None:
        index = self.service.index
        if self.result is not None:
            text = self.result.status_text()
        else:
            n = index.n_packages if index else 0
            s = index.n_specs if index else 0
            text = f"0 of {n} packages · 0 of {s} specs"
        status = Text(text)
        if not self.filters_shown and self.filter.selections:  # folded away, but still narrowing
            chosen = " ".join(
                f"{facet}={','.join(sorted(values))}" for facet, values in self.filter.selections
            )
            status.append(f" · filters: {visible(chosen)} (f)", style="bold")
        if self._loading:
            status.append(f" · {self._loading}", style="italic")
        if self._query_error:
            status.append(f" · query: {visible(self._query_error)}", style="bold red")
        elif self.result is not None and self.result.spack_0x_reading is not None:
            # Spack 1.x binds `zlib %gcc@9 +shared`'s +shared to gcc; say what would match.
            # Short: at 80 columns the status line has ~45 left; the search box's subtitle says
            # more.
            status.append(f" · try: {visible(self.result.spack_0x_reading)}", style="bold")
        check = self.service.check
        if check is not None and self.service.index is not None:
            hits = check.count("hit")
            status.append(f" · env: {hits} of {hits + check.count('miss')} specs cached (E)")
        report = self.service.report
        if report and report.problems:
            status.append(f" · {len(report.problems)} load problems (p)", style="bold")
        # No source given: what is shown (Spack's mirrors, the sample data), where it fits
        # whole after what the user can act on (`cachetui config` always says).
        line = self.query_one("#status", Static)
        note = f" · {self.service.sources_origin}"
        room = line.content_size.width or self.app.size.width - 2  # (before the first layout)
        if self.service.sources_origin in CHOSEN_BY_DEFAULT and len(status) + len(note) <= room:
            status.append(note)
        line.update(status, layout=False)  # one line, always

    # -- events from the widgets (messages up) ------------------------------------------

    def _query_only(self, text: str) -> int:
        """The rows the search text matches in everything loaded, facets aside."""
        try:
            result = self.service.evaluate(Filter(text))
        except QueryError:  # asks what the sources cannot answer: it matches nothing here
            return 0
        return result.mask if result is not None else 0

    @on(Input.Submitted, "#search")
    def _search_submitted(self, event: Input.Submitted) -> None:
        query = parsed(event.value)
        if query is None:
            return  # the box already says what is wrong; stay in it
        if query.hash_prefixes and self.service.index is not None:
            # The matches the list shows, as the hint counts them; if the facets hide them
            # all, the matches in everything loaded (the hint says so).
            shown = (
                self.result
                if self.result is not None and self.result.filter.query == event.value
                else None
            )
            mask = (
                shown.mask
                if shown is not None and shown.matching_specs
                else self._query_only(event.value)
            )
            rows = self.service.index.rows_in(mask)
            self._go_to_specs(
                rows, query.hash_prefixes[-1], narrowed=len(query.constraint_tokens) > 1
            )
        else:
            self._focus(self.query_one(PackageList))

    def on_facet_sidebar_toggled(self, event: FacetSidebar.Toggled) -> None:
        self.filter = self.filter.toggled(event.facet, event.value)
        self._request()

    def on_line_list_highlighted(self, event: LineList.Highlighted) -> None:
        if isinstance(event.line_list, PackageList) and self._shown[1] is self.result:
            self._show_package(event.line_list.highlighted_package)  # else _apply's call is due
        elif isinstance(event.line_list, SpecList):
            self.query_one(SpecDetail).row = event.line_list.highlighted_row

    def on_line_list_selected(self, event: LineList.Selected) -> None:
        if isinstance(event.line_list, PackageList):
            self._focus(self.query_one(SpecList))
        elif isinstance(event.line_list, SpecList):
            self.detail_shown = True  # enter on a spec opens its detail, folded or not
            self._focus(self.query_one(SpecDetail))

    def on_dependency_list_chosen(self, event: DependencyList.Chosen) -> None:
        """Enter on a dependency in the detail pane: go to its spec, or say why not."""
        from cachetui.index.deps import (
            rows_of,
        )  # the index brings numpy: not before the first frame

        index, detail = self.service.index, self.query_one(SpecDetail)
        if index is None:
            return
        tag = index.field("tag", detail.row) if detail.row is not None else None
        rows = rows_of(index, event.dependency, tag)
        if rows:
            self.jump_to(rows[0], "Dependency")
            self._focus(detail)  # stay in the pane: the next dependency is a key away
        else:
            self.notify(
                visible(why_no_spec(index, event.dependency)), title="Dependency", markup=False
            )

    # -- hash lookup --------------------------------------------------------------------

    def _go_to_specs(self, rows: list[int], prefix: str, narrowed: bool) -> None:
        """Go to the one spec a hash prefix found, or offer the choice of several.
        `narrowed`: the search had more than the prefix, and `rows` match all of it."""
        if not rows:
            rest = " that matches the rest of the search" if narrowed else ""
            self.notify(
                visible(f"No spec{rest} has a hash starting with /{prefix}"),
                title="Hash lookup",
                severity="warning",
                markup=False,
            )
        elif len(rows) == 1:
            self.jump_to(rows[0])
        elif self.service.index is not None:
            self.app.push_screen(
                HashLookupScreen(self.service.index, "/" + prefix, rows), self._chosen
            )

    def _chosen(self, row: int | None) -> None:
        if row is not None:
            self.jump_to(row)

    def jump_to(self, row: int, why: str = "Hash lookup") -> None:
        """Highlight the package and the spec of `row`, clearing the facets or the search
        (or both) if they hide it."""
        index = self.service.index
        if index is None:
            return
        package = index.package_of(row)
        if self.result is None or not (self.result.mask >> row) & 1:
            # Clear only what hides it: the facets, the search, or both.
            shown = reveal(self.service, self.filter, row)
            self.filter = shown.filter
            if shown.search_cleared:
                self.query_one("#search", Input).value = ""
            self._apply(self.service.evaluate(self.filter, self.service.next_generation()))
            if shown.cleared:  # (else the shown result was only out of date)
                self.notify(f"{shown.cleared} cleared to show /{index.hashes[row][:7]}", title=why)
        packages, specs = self.query_one(PackageList), self.query_one(SpecList)
        packages.select_package(package)
        self._show_package(package)
        specs.select_row(row)
        self.query_one(SpecDetail).row = row
        self._focus(specs)

    # -- actions ------------------------------------------------------------------------

    def go_to_hash(self) -> None:
        """Open the hash lookup (the app's ctrl+g, from anywhere)."""
        if self.service.index is None:
            failed = self._loading == "load failed"
            self.notify(
                "Nothing was loaded to look in."
                if failed
                else "Still loading; try again in a moment.",
                severity="error" if failed else "warning",
            )
        else:
            self.app.push_screen(HashLookupScreen(self.service.index), self._chosen)

    def action_focus_search(self) -> None:
        self.stats_shown = False  # the box sits above the lists: show them, or it types unseen
        self._focus(self.query_one("#search", Input))

    def action_problems(self) -> None:
        report = self.service.report
        if report is None:
            self.notify("Still loading.", severity="warning")
        else:
            self.app.push_screen(ProblemsScreen(report.problems))

    def action_clear_filters(self) -> None:
        if self.filter.selections:
            self.filter = self.filter.without_selections()
            self._request()
            self._update_status()

    def on_toggle_filter(self, message: ToggleFilter) -> None:
        """Turn one filter value on or off (the palette's way to the sidebar's space)."""
        self.filter = self.filter.toggled(message.facet, message.value)
        self._request()
        self._update_status()

    def on_switch_tag(self, message: SwitchTag) -> None:
        """Show one cache tag only (None: every tag)."""
        self.filter = self.filter.with_selection("tag", {message.tag} if message.tag else set())
        self._request()
        self._update_status()

    def on_compare_tags(self, message: CompareTags) -> None:
        self.compare(message.old, message.new)

    def on_go_to_package(self, message: GoToPackage) -> None:
        self.go_to_package(message.package)

    def on_look_up_hash(self, message: LookUpHash) -> None:
        """Go to the spec whose hash starts with the prefix, or offer the choice of several."""
        if self.service.index is not None:
            self._go_to_specs(
                self.service.index.lookup_hash(message.prefix), message.prefix, narrowed=False
            )

    def go_to_package(self, package: int) -> None:
        """Highlight `package` in the list, clearing what hides it, and move to its specs."""
        index = self.service.index
        packages = self.query_one(PackageList)
        if index is None:
            return
        if package not in packages.packages:
            rows = index.rows_in_package(package, index.all_rows)
            if not rows:
                return
            self.jump_to(rows[0], "Package")
        packages.select_package(package)
        self._show_package(package)
        self._focus(packages)

    def action_leave_search(self) -> None:
        if self.focused is self.query_one("#search"):
            self._focus(self.query_one(PackageList))
