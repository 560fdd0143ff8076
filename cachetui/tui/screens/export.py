"""Export (`e`): the specs the filters and the search match, as CSV, JSON or Spack spec
lines, to a file the user names. The screen only asks; the main screen writes, in a worker."""

from __future__ import annotations

from pathlib import Path

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Input, Label, RadioButton, RadioSet

from cachetui.output import EXPORT_FORMATS
from cachetui.tui.screens.once import DismissOnce
from cachetui.tui.widgets.safe_input import SafeInput

EXTENSIONS = {"csv": ".csv", "json": ".json", "specs": ".txt"}


def default_path(form: str, folder: Path | None = None) -> Path:
    return (folder or Path.cwd()) / f"cachetui-specs{EXTENSIONS[form]}"


class ExportScreen(DismissOnce, ModalScreen["tuple[str, Path] | None"]):
    HELP_GROUP = "export"
    BINDINGS = [
        Binding(
            "escape",
            "cancel",
            "Cancel",
            id="cancel-export",
            tooltip="Close the export, writing nothing",
        )
    ]

    def __init__(self, specs: int) -> None:
        super().__init__()
        self._specs = specs
        self._form = "csv"
        self._confirmed: Path | None = None  # an existing file the user chose to overwrite

    def compose(self) -> ComposeResult:
        with Vertical(id="export-box"):
            yield Label(
                f"Export the {self._specs:,} specs the filters and the search match",
                id="export-title",
            )
            with RadioSet(id="export-format"):
                for number, (form, name) in enumerate(EXPORT_FORMATS.items()):
                    yield RadioButton(name, value=number == 0, name=form)
            yield SafeInput(value=str(default_path(self._form)), id="export-path")
            yield Label(
                "enter writes the file · tab: format or file · escape: cancel",
                id="export-hint",
                markup=False,
            )

    def on_mount(self) -> None:
        self.query_one("#export-path", Input).focus()

    @on(RadioSet.Changed)
    def _format_changed(self, event: RadioSet.Changed) -> None:
        path_box = self.query_one("#export-path", Input)
        old = self._form
        self._form = event.pressed.name or "csv"
        # A path still ending as the old format's default did follows the new format.
        if path_box.value.endswith(EXTENSIONS[old]):
            path_box.value = path_box.value[: -len(EXTENSIONS[old])] + EXTENSIONS[self._form]

    @on(Input.Changed, "#export-path")
    def _path_changed(self) -> None:
        self._confirmed = None
        self._hint("enter writes the file · tab: format or file · escape: cancel")

    @on(Input.Submitted, "#export-path")
    def _submitted(self, event: Input.Submitted) -> None:
        text = event.value.strip()
        if not text:
            self._hint("name a file to write")
            return
        path = Path(text).expanduser()
        if path.is_dir():
            self._hint(f"{path} is a directory: name a file in it")
        elif not path.parent.is_dir():
            self._hint(f"no such directory: {path.parent}")
        elif path.exists() and self._confirmed != path:
            self._confirmed = path
            self._hint(f"{path.name} exists: enter again to overwrite it")
        else:
            self.dismiss_once((self._form, path))

    def _hint(self, text: str) -> None:
        from cachetui.textsafe import visible

        self.query_one("#export-hint", Label).update(visible(text))

    def action_cancel(self) -> None:
        self.dismiss_once(None)
