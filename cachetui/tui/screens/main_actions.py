"""What the main screen does with the specs it shows: export them, copy a field, page a
record, compare tags and switch between them. Mixed into MainScreen; the decisions are the
service's (service/export.py, service/compare.py)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol, runtime_checkable

from textual import work

from cachetui.config import Config
from cachetui.output import json_text, spec_record
from cachetui.pager import DEFAULT_PAGER, run_pager
from cachetui.textsafe import visible
from cachetui.tui.screens.main_part import MainScreenPart
from cachetui.tui.widgets.spec_detail import SpecDetail

if TYPE_CHECKING:
    from pathlib import Path

    from cachetui.index.diff import TagDiff
    from cachetui.index.filter import Result
    from cachetui.index.store import Index


@runtime_checkable
class Copying(Protocol):
    def copy(self, text: str, what: str) -> None: ...


class SpecActions(MainScreenPart):
    """Export (`e`), copy (`y`...), the pager (`v`)."""

    def action_export(self) -> None:
        from cachetui.tui.screens.export import ExportScreen

        index, result = self.service.index, self.result
        if index is None or result is None:
            self.notify("Nothing is loaded yet.", title="Export", severity="warning")
            return

        def chosen(choice: tuple[str, Path] | None) -> None:
            if choice is not None:
                self._export(index, result, *choice)

        self.app.push_screen(ExportScreen(result.matching_specs), chosen)

    @work(thread=True, group="export")
    def _export(self, index: Index, result: Result, form: str, path: Path) -> None:
        """Write in a worker: a million CSV lines take seconds."""
        from cachetui.service.export import export

        try:
            written = export(index, result, form, path)
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
            visible(f"Wrote {written:,} specs to {path}"),
            title="Export",
            markup=False,
        )

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
        app = self.app
        assert isinstance(app, Copying)  # the app this screen belongs to
        if what == "hash":
            app.copy(spec.hash, "hash")
        elif what == "install":
            app.copy(spec.install_command, "install command")
        elif spec.tarball:
            app.copy(spec.tarball, "tarball URL")
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


class TagActions(MainScreenPart):
    """Compare two tags (`c`), switch tag (`t`)."""

    def action_compare(self) -> None:
        from cachetui.tui.palette import CompareCommands
        from cachetui.tui.screens.palette import Palette

        index = self.service.index
        if index is None or len(index.facet_values.get("tag", [])) < 2:
            self.notify(
                "Comparing needs two cache tags loaded (cachetui diff OLD NEW compares sources "
                "too).",
                title="Compare",
            )
            return
        self.app.push_screen(
            Palette(providers=[CompareCommands], placeholder="Compare two cache tags: old -> new…")
        )

    def compare(self, old: str, new: str) -> None:
        """Show what changed from tag `old` to tag `new`: worked out once in a worker, then kept,
        so coming back from a spec the diff screen went to is instant."""
        self._compare_wanted = (old, new)
        index = self.service.index
        if index is None:
            return
        known = self.service.comparisons.known(index, old, new)
        if known is not None:
            self._show_diff(known)
            return
        self.notify(
            visible(f"Comparing {old} with {new}…"), title="Compare", timeout=3, markup=False
        )
        self._compare(index, old, new)

    @work(thread=True, group="compare")
    def _compare(self, index: Index, old: str, new: str) -> None:
        changes = self.service.comparisons.compare(index, old, new)
        self.app.call_from_thread(self._diff_ready, (old, new), changes)

    def _diff_ready(self, key: tuple[str, str], changes: TagDiff) -> None:
        if key != self._compare_wanted:
            return  # another comparison was asked for since: that one shows
        if self.app.screen is self:
            self._show_diff(changes)
        else:  # the user went on meanwhile: do not cover what they are doing
            self.notify(
                visible(f"{key[0]} -> {key[1]} is ready: press c to see it"),
                title="Compare",
                markup=False,
            )

    def _show_diff(self, changes: TagDiff) -> None:
        from cachetui.tui.screens.diff import DiffScreen

        self._compare_wanted = None

        def chosen(row: int | None) -> None:
            if row is not None:
                self.jump_to(row, "Compare")

        self.app.push_screen(DiffScreen(changes), chosen)

    def action_switch_tag(self) -> None:
        from cachetui.tui.palette import TagCommands
        from cachetui.tui.screens.palette import Palette

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


class CoverageActions(MainScreenPart):
    """The environment's coverage (`E`, with `cachetui --env ENV`)."""

    def action_coverage(self) -> None:
        from cachetui.tui.screens.coverage import CoverageScreen

        index, check = self.service.index, self.service.check
        if index is None:
            self.notify("Still loading.", title="Environment", severity="warning")
            return
        if check is None:
            unread = self.service.environment is not None
            self.notify(
                "The environment could not be read: see the load problems (p)."
                if unread
                else "No environment: start cachetui with --env ENV (a spack.lock, an "
                "environment directory, a spec file or an install database).",
                title="Environment",
                severity="warning",
            )
            return

        def chosen(row: int | None) -> None:
            if row is not None:
                self.jump_to(row, "Environment")

        self.app.push_screen(CoverageScreen(index, check), chosen)
