"""Loading, on the main screen's side: the service loads in a worker that posts progress,
failure and the report; the screen shows each. Mixed into MainScreen."""

from __future__ import annotations

from typing import TYPE_CHECKING

from textual import work
from textual.worker import get_current_worker

from cachetui.output import download_text
from cachetui.textsafe import visible
from cachetui.tui.messages import DownloadAdvanced, LoadAdvanced, Loaded, LoadFailed
from cachetui.tui.screens.main_part import MainScreenPart
from cachetui.tui.widgets.facet_sidebar import FacetSidebar
from cachetui.tui.widgets.spec_detail import SpecDetail

if TYPE_CHECKING:
    pass


class Loading(MainScreenPart):
    @work(thread=True, exclusive=True, group="load")
    def _load(self) -> None:
        worker = get_current_worker()
        try:
            report = self.service.load(
                progress=self._load_advanced,
                cancelled=lambda: worker.is_cancelled,
                download=self._download_advanced,
            )
        except Exception as error:  # never a traceback in front of the user
            self.post_message(LoadFailed(f"{type(error).__name__}: {error}"))
            return
        if not worker.is_cancelled:
            self.post_message(Loaded(report))
            self.service.warm_up()  # here, not on the first move or `^` query in the UI

    def _load_advanced(self, done: int, total: int, specs: int) -> None:
        self.post_message(LoadAdvanced(done, total, specs))

    def _download_advanced(self, url: str, done: int, total: int | None) -> None:
        self.post_message(DownloadAdvanced(url, done, total))

    def on_load_advanced(self, message: LoadAdvanced) -> None:
        self._loading = (
            f"loading {message.done:,} of {message.total:,} files, {message.specs:,} specs"
        )
        self._update_status()

    def on_download_advanced(self, message: DownloadAdvanced) -> None:
        self._loading = download_text(message.url, message.done, message.total)
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
