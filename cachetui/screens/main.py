"""The main screen: facets | search + packages | specs + detail, a status line, a footer.

Below 120 columns the filters and the detail pane fold away (f and d bring them back); at
120 and wider everything shows at once. Folding is two reactives that toggle CSS classes.

It owns the flow: loading runs in a thread worker that posts progress; each change of
search text or facets claims a generation number from the service and evaluates in an
exclusive worker; a result that is no longer current is dropped, never shown.
"""

from __future__ import annotations

import gc

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.content import Content
from textual.events import Resize
from textual.reactive import var
from textual.screen import Screen
from textual.widgets import Footer, Input, Static
from textual.worker import get_current_worker

from cachetui.config import Config
from cachetui.index.filter import Filter, Result
from cachetui.index.highlight import highlight_for
from cachetui.index.query import Query, QueryError, parse_query
from cachetui.messages import (
    DownloadProgress,
    Loaded,
    LoadFailed,
    LoadProgress,
    QueryRejected,
    ResultReady,
)
from cachetui.output import json_text, replacing, spec_record
from cachetui.pager import DEFAULT_PAGER, run_pager
from cachetui.screens.hash_lookup import HashLookupScreen
from cachetui.screens.problems import ProblemsScreen
from cachetui.service import IndexService
from cachetui.textsafe import visible
from cachetui.widgets.dependency_list import DependencyList
from cachetui.widgets.facet_sidebar import FacetSidebar
from cachetui.widgets.line_list import LineList
from cachetui.widgets.package_list import PackageList
from cachetui.widgets.safe_input import SafeInput
from cachetui.widgets.spec_detail import SpecDetail
from cachetui.widgets.spec_list import SpecList
from cachetui.widgets.stats_view import StatsView

# At this width and wider, the filters, the lists and the detail pane all fit side by side.
WIDE = 120


class MainScreen(Screen):
    HELP_GROUP = "main"
    HORIZONTAL_BREAKPOINTS = [(0, "-narrow"), (WIDE, "-wide")]
    BINDINGS = [
        Binding(
            "slash",
            "focus_search",
            "Search",
            id="focus-search",
            tooltip="Focus the search box (Spack spec syntax; /prefix finds hashes)",
        ),
        Binding(
            "tab",
            "app.focus_next",
            "Next pane",
            show=False,
            id="focus-next",
            tooltip="Move to the next pane",
        ),
        Binding(
            "shift+tab",
            "app.focus_previous",
            "Previous pane",
            show=False,
            id="focus-previous",
            tooltip="Move to the previous pane",
        ),
        Binding(
            "escape",
            "leave_search",
            "Leave search",
            show=False,
            id="leave-search",
            tooltip="Leave the search box for the package list",
        ),
        Binding(
            "f,f2",
            "toggle_filters",
            "Filters",
            id="toggle-filters",
            tooltip="Show or hide the filters (stacks, OS, targets, compilers, ...)",
        ),
        Binding(
            "d,f3",
            "toggle_detail",
            "Detail",
            id="toggle-detail",
            tooltip="Show or hide the detail pane of the highlighted spec",
        ),
        Binding(
            "t",
            "switch_tag",
            "Tag",
            show=False,
            id="switch-tag",
            tooltip="Switch to another cache tag (develop, a release, a snapshot), or all of them",
        ),
        Binding(
            "s",
            "toggle_stats",
            "Stats",
            id="toggle-stats",
            tooltip=(
                "Show or hide stats of what the filters and the search match: "
                "per stack, OS, target, compiler; stack x target; top packages"
            ),
        ),
        Binding(
            "c",
            "compare",
            "Compare",
            show=False,
            id="compare-tags",
            tooltip="Compare two cache tags: specs added, removed and rebuilt, per package",
        ),
        Binding(
            "e",
            "export",
            "Export",
            show=False,
            id="export-specs",
            tooltip=(
                "Write the specs the filters and the search match to a file: "
                "CSV, JSON or Spack spec lines"
            ),
        ),
        Binding(
            "x",
            "clear_filters",
            "Clear filters",
            show=False,
            id="clear-filters",
            tooltip="Clear every filter (the search text stays)",
        ),
        Binding(
            "y",
            "copy('hash')",
            "Copy hash",
            id="copy-hash",
            tooltip="Copy the highlighted spec's full hash (OSC 52; shown too)",
        ),
        Binding(
            "Y",
            "copy('install')",
            "Copy install",
            show=False,
            id="copy-install",
            tooltip="Copy the highlighted spec's install command",
        ),
        Binding(
            "U",
            "copy('url')",
            "Copy URL",
            show=False,
            id="copy-url",
            tooltip="Copy the highlighted spec's tarball URL, when known",
        ),
        Binding(
            "v",
            "view_record",
            "View JSON",
            show=False,
            id="view-record",
            tooltip="Open the highlighted spec's full record (JSON) in $PAGER",
        ),
        Binding(
            "p",
            "problems",
            "Problems",
            show=False,
            id="show-problems",
            tooltip="List every load problem (file and reason)",
        ),
    ]
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
        self._diffs: dict[
            tuple[str, str], tuple[object, object]
        ] = {}  # (old, new) -> (index, TagDiff)
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

    def _leave_if_hidden(self, pane: str, shown: bool, to: str) -> None:
        """Folding the pane that has the focus hands it on to `to`."""
        if not shown and self.query_one(pane).has_focus_within:
            self.query_one(to).focus()

    def action_toggle_filters(self) -> None:
        self.filters_shown = not self.filters_shown
        if self.filters_shown:
            self.query_one(FacetSidebar).focus()  # shown to be used

    def action_toggle_detail(self) -> None:
        self.detail_shown = not self.detail_shown

    def action_toggle_stats(self) -> None:
        self.stats_shown = not self.stats_shown

    def watch_stats_shown(self, shown: bool) -> None:
        self.set_class(shown, "-stats")
        if shown:
            self._request_stats()
            self.query_one(StatsView).focus()
        elif self.focused is None or self.focused.id == "stats":
            self.query_one(PackageList).focus()

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

    # -- loading ------------------------------------------------------------------------

    @work(thread=True, exclusive=True, group="load")
    def _load(self) -> None:
        worker = get_current_worker()
        try:
            report = self.service.load(
                progress=lambda done, total, specs: self.post_message(
                    LoadProgress(done, total, specs)
                ),
                cancelled=lambda: worker.is_cancelled,
                download=lambda url, done, total: self.post_message(
                    DownloadProgress(url, done, total)
                ),
            )
        except Exception as error:  # never a traceback in front of the user
            self.post_message(LoadFailed(f"{type(error).__name__}: {error}"))
            return
        if not worker.is_cancelled:
            self.post_message(Loaded(report))
            _ = (
                report.index.graph
            )  # read the dependency graph here, not on the first move in the UI

    def on_load_progress(self, message: LoadProgress) -> None:
        self._loading = (
            f"loading {message.done:,} of {message.total:,} files, {message.specs:,} specs"
        )
        self._update_status()

    def on_download_progress(self, message: DownloadProgress) -> None:
        name = visible(message.url.rstrip("/").rsplit("/", 1)[-1][:40])
        done = _megabytes(message.done)
        self._loading = (
            f"downloading {name}: {done} of {_megabytes(message.total)} MB"
            if message.total
            else f"downloading {name}: {done} MB"
        )
        self._update_status()

    def on_load_failed(self, message: LoadFailed) -> None:
        self._loading = "load failed"
        self._update_status()
        self.notify(visible(message.reason), title="Could not load", severity="error", markup=False)

    def on_loaded(self, message: Loaded) -> None:
        report = message.report
        self._loading = ""
        detail = self.query_one(SpecDetail)
        detail.index = report.index
        detail.row = None  # a new index: the same row number is another spec
        self.query_one(FacetSidebar).empty_text = "no data loaded"
        self._apply(self.service.evaluate(self.filter, self.service.next_generation()))
        errors = len(report.errors)
        if report.problems:
            first = report.problems[0]
            more = f" (and {len(report.problems) - 1:,} more)" if len(report.problems) > 1 else ""
            self.notify(
                visible(f"{first.source}: {first.message}{more}"),
                title="Load problems",
                severity="error" if errors else "warning",
                markup=False,
            )
        if report.index.n_specs == 0:
            self.notify("Nothing loadable in the given sources.", severity="error")
        # The index and the app are built and live as long as the process: move them out of
        # the collector's sight. Otherwise every oldest-generation collection walks them all,
        # a pause of 50-65 ms at a million specs that lands in the middle of a keystroke.
        gc.collect()  # what is garbage now would otherwise be frozen with the rest, for good
        gc.freeze()
        # Every frame leaves garbage in cycles (Textual's Strips cache themselves in their
        # own crop caches: seven caches a strip). Collected with the youngest generation
        # (threshold 1), it goes a few thousand objects at a time; left to pile up in the
        # middle one (20_000, 20, 20), one collection freed 90k objects in 142 ms, in the
        # middle of a facet toggle at 1M. (10_000, 1, 50): the longest pause 33 ms.
        gc.set_threshold(10_000, 1, 50)

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
        self.result = result
        index = self.service.index
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
        _set_border_title(
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
        report = self.service.report
        if report and report.problems:
            status.append(f" · {len(report.problems)} load problems (p)", style="bold")
        self.query_one("#status", Static).update(status, layout=False)  # one line, always

    # -- events from the widgets (messages up) ------------------------------------------

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
            # The box has room the status line lacks at 80 columns.
            hint = f"did you mean: {visible(result.spack_0x_reading)}"
        elif text.endswith("/") and _parsed(text) is None:  # (`tag=a/` parses: a value)
            hint = "hash lookup: type the first characters of a hash"
        elif result is not None and result.filter.query != text and "/" in text:
            return  # its result is on its way, and updates the hint when it comes
        elif "/" not in text or result is None or not getattr(_parsed(text), "hash_prefixes", ()):
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
        _set_border_title(search, hint, subtitle=True)

    def _query_only(self, text: str) -> int:
        """The rows the search text matches in everything loaded, facets aside."""
        return self.service.evaluate(Filter(text)).mask

    @on(Input.Submitted, "#search")
    def _search_submitted(self, event: Input.Submitted) -> None:
        query = _parsed(event.value)
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
            self.query_one(PackageList).focus()

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
            self.query_one(SpecList).focus()
        elif isinstance(event.line_list, SpecList):
            self.detail_shown = True  # enter on a spec opens its detail, folded or not
            self.query_one(SpecDetail).focus()

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
            detail.focus()  # stay in the pane: the next dependency is a key away
        else:
            self.notify(
                visible(_not_loaded(index, event.dependency)), title="Dependency", markup=False
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
        else:
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
        package = index.package_of(row)
        if self.result is None or not (self.result.mask >> row) & 1:
            # Clear only what hides it: the facets, the search, or both.
            facets_hide = (
                not (self.service.evaluate(Filter("", self.filter.selections)).mask >> row) & 1
            )
            search_hides = not (self._query_only(self.filter.query) >> row) & 1
            cleared = " and ".join(
                what
                for what, hides in (("Search", search_hides), ("filters", facets_hide))
                if hides
            )
            self.filter = Filter(
                "" if search_hides else self.filter.query,
                () if facets_hide else self.filter.selections,
            )
            if search_hides:
                self.query_one("#search", Input).value = ""
            self._apply(self.service.evaluate(self.filter, self.service.next_generation()))
            if cleared:  # (else the shown result was only out of date)
                self.notify(
                    f"{cleared.capitalize()} cleared to show /{index.hashes[row][:7]}", title=why
                )
        packages, specs = self.query_one(PackageList), self.query_one(SpecList)
        packages.select_package(package)
        self._show_package(package)
        specs.select_row(row)
        self.query_one(SpecDetail).row = row
        specs.focus()

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
        self.query_one("#search", Input).focus()

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

    def toggle_facet(self, facet: str, value: str) -> None:
        """Turn one filter value on or off (the palette's way to the sidebar's space)."""
        self.filter = self.filter.toggled(facet, value)
        self._request()
        self._update_status()

    def switch_tag(self, tag: str | None) -> None:
        """Show one cache tag only (None: every tag)."""
        self.filter = self.filter.with_selection("tag", {tag} if tag else set())
        self._request()
        self._update_status()

    def action_export(self) -> None:
        from cachetui.screens.export import ExportScreen

        if self.service.index is None or self.result is None:
            self.notify("Nothing is loaded yet.", title="Export", severity="warning")
            return
        result = self.result
        self.app.push_screen(
            ExportScreen(result.matching_specs),
            lambda chosen: chosen and self._export(result, *chosen),
        )

    @work(thread=True, group="export")
    def _export(self, result: Result, form: str, path) -> None:
        """Write in a worker: a million CSV lines take seconds. The file is written beside its
        target and renamed into place, so a failed write never leaves half a file where the
        user looks for it; a symlink is written through, and the file gets the mode it had,
        or the one the umask gives a new file."""
        from cachetui.output import write_export

        index = self.service.index
        rows = index.rows_in(result.mask)
        selections = {facet: sorted(values) for facet, values in result.filter.selections}
        try:
            with replacing(path) as out:
                write_export(
                    index, rows, form, out, {"query": result.filter.query, "selections": selections}
                )
        except OSError as error:
            self.app.call_from_thread(
                self.notify,
                visible(f"Could not write {path}: {error.strerror or error}"),
                title="Export",
                severity="error",
                markup=False,
            )
            return
        self.app.call_from_thread(
            self.notify,
            visible(f"Wrote {len(rows):,} specs to {path}"),
            title="Export",
            markup=False,
        )

    def action_compare(self) -> None:
        from cachetui.commands import CompareCommands
        from cachetui.screens.palette import Palette

        index = self.service.index
        if index is None or len(index.facet_values.get("tag", [])) < 2:
            self.notify(
                "Comparing needs two cache tags loaded "
                "(cachetui diff OLD NEW compares sources too).",
                title="Compare",
            )
            return
        self.app.push_screen(
            Palette(providers=[CompareCommands], placeholder="Compare two cache tags: old -> new…")
        )

    def compare(self, old: str, new: str) -> None:
        """Show what changed from tag `old` to tag `new`: worked out once in a worker, then kept,
        so coming back from a spec the diff screen went to is instant."""
        key = (old, new)
        self._compare_wanted = key
        index = self.service.index
        if self._diffs.get(key, (None, None))[0] is index:
            self._show_diff(key)
            return
        self.notify(
            visible(f"Comparing {old} with {new}…"), title="Compare", timeout=3, markup=False
        )
        self._compare(index, old, new)

    def compared(self, old: str, new: str) -> bool:
        return self._diffs.get((old, new), (None, None))[0] is self.service.index

    @work(thread=True, group="compare")
    def _compare(self, index, old: str, new: str) -> None:
        from cachetui.index.diff import Side, diff

        tags = index.facet_values["tag"]
        side = {
            tag: Side(tag, index, index.rows_in(index.facet_bits["tag"][tags.index(tag)]))
            for tag in (old, new)
        }
        changes = diff(side[old], side[new])
        self.app.call_from_thread(self._diff_ready, index, (old, new), changes)

    def _diff_ready(self, index, key: tuple[str, str], changes) -> None:
        self._diffs[key] = (index, changes)
        if key != self._compare_wanted:
            return  # another comparison was asked for since: that one shows
        if self.app.screen is self:
            self._show_diff(key)
        else:  # the user went on meanwhile: do not cover what they are doing
            self.notify(
                visible(f"{key[0]} -> {key[1]} is ready: press c to see it"),
                title="Compare",
                markup=False,
            )

    def _show_diff(self, key: tuple[str, str]) -> None:
        from cachetui.screens.diff import DiffScreen

        self._compare_wanted = None
        self.app.push_screen(
            DiffScreen(self._diffs[key][1]),
            lambda row: row is not None and self.jump_to(row, "Compare"),
        )

    def action_switch_tag(self) -> None:
        from cachetui.commands import TagCommands
        from cachetui.screens.palette import Palette

        index = self.service.index
        tags = index.facet_values.get("tag", []) if index is not None else []
        if len(tags) < 2 and not self.filter.selected.get("tag"):
            self.notify(
                visible(
                    f"One cache tag is loaded: {tags[0]}" if tags else "Nothing is loaded yet."
                ),
                title="Tag",
                markup=False,
            )
            return
        self.app.push_screen(Palette(providers=[TagCommands], placeholder="Switch to a cache tag…"))

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
        packages.focus()

    def look_up_hash(self, prefix: str) -> None:
        """Go to the spec whose hash starts with `prefix`, or offer the choice of several."""
        if self.service.index is not None:
            self._go_to_specs(self.service.index.lookup_hash(prefix), prefix, narrowed=False)

    @property
    def highlighted_row(self) -> int | None:
        """The spec the copy keys, the pager and the detail pane are about."""
        return self.query_one(SpecDetail).row

    def action_copy(self, what: str) -> None:
        index, row = self.service.index, self.highlighted_row
        if index is None or row is None:
            self.notify("No spec is highlighted.", title="Copy", severity="warning")
            return
        spec = index.spec(row)
        if what == "hash":
            self.app.copy(spec.hash, "hash")
        elif what == "install":
            self.app.copy(spec.install_command, "install command")
        elif spec.tarball:
            self.app.copy(spec.tarball, "tarball URL")
        else:
            files = index.binary_files(row)
            where = f"; its spec manifest: {files.manifest}" if files.manifest else ""
            self.notify(
                visible(
                    f"No tarball URL is known for {spec.package}@{spec.version} "
                    f"/{spec.hash[:7]}{where}"
                ),
                title="Copy",
                severity="warning",
                markup=False,
            )

    def action_view_record(self) -> None:
        """The highlighted spec's full record as JSON in the user's pager, the app suspended."""
        from textual.app import SuspendNotSupported

        index, row = self.service.index, self.highlighted_row
        if index is None or row is None:
            self.notify("No spec is highlighted.", title="Pager", severity="warning")
            return
        text = json_text(spec_record(index, row)) + "\n"
        config: Config = getattr(self.app, "config", None) or Config()
        command = config.pager or DEFAULT_PAGER
        try:
            with self.app.suspend():
                failed = run_pager(command, text)
        except SuspendNotSupported:
            failed = "this terminal cannot hand the screen to a pager"
        if failed:
            self.notify(
                visible(failed) + " (set $PAGER, or pager in the config file)",
                title="Pager",
                severity="error",
                markup=False,
            )

    def action_leave_search(self) -> None:
        if self.focused is self.query_one("#search"):
            self.query_one(PackageList).focus()


def _not_loaded(index, dependency) -> str:
    """Why a dependency has no spec to go to, in the user's terms."""
    label = f"{dependency.name}@{dependency.version}" if dependency.version else dependency.name
    label += f" /{dependency.hash[:7]}"
    kind = dependency.kind_name
    if kind == "external":
        path = index.graph.external_path(dependency.node) if index.graph else None
        where = f" ({path})" if path else ""
        return f"{label} is an external{where}, not a binary in the loaded caches"
    if kind == "not in the build cache":
        return f"{label} is not in the build cache: its index records it, without a binary"
    if kind == "a dependency in a spec file":
        return (
            f"{label} is only named as a dependency in a spec file, "
            "not a binary in the loaded caches"
        )
    return f"{label} is not in the loaded caches"


def _megabytes(size: int) -> str:
    return f"{size / 1e6:,.1f}"


def _parsed(text: str) -> Query | None:
    try:
        return parse_query(text)
    except QueryError:
        return None


def _set_border_title(widget, text: str, subtitle: bool = False) -> None:
    """Set a border title (or subtitle) as plain text, repainting the widget only if it changed.

    A title given as str is parsed as markup, and data must go in as plain Content. Textual
    repaints every line of the widget on each assignment, even of the same text: a keystroke
    that set the same title cost a full repaint of the spec list and the search box.
    """
    attribute = "border_subtitle" if subtitle else "border_title"
    title = Content(visible(text))
    if getattr(widget, attribute) != title.markup:  # the getter gives the title as markup
        setattr(widget, attribute, title)
