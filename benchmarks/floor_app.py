"""The floors: bare Textual apps that do on each key what cachetui's frame does, and no more.

    python benchmarks/floor_app.py            # echo: an Input echoed into a Static
    python benchmarks/floor_app.py --cells N  # the echo, and N more cells repainted a key

Whatever a keystroke costs here is the cost of Textual, the terminal and tmux on this
machine. With --cells, each key also repaints a full-width block of N cells (text that
changes with every key), as many as cachetui repaints for a keystroke (run.py measures
that): the floor of the stack for the same work on screen.
"""

from __future__ import annotations

import sys

from textual.app import App, ComposeResult
from textual.widgets import Input, Static


class Floor(App):
    def __init__(self, cells: int = 0) -> None:
        super().__init__()
        self.cells = cells

    def compose(self) -> ComposeResult:
        yield Input(id="in")
        yield Static("echo: ", id="out", markup=False)
        if self.cells:
            yield Static("", id="paint", markup=False)

    def on_mount(self) -> None:
        if self.cells:
            self.query_one("#paint", Static).styles.height = self._rows()

    def _rows(self) -> int:
        return max(1, -(-self.cells // max(1, self.size.width)))

    def on_input_changed(self, event: Input.Changed) -> None:
        self.query_one("#out", Static).update(f"echo: {event.value}|")
        if self.cells:
            width = self.size.width
            text = "\n".join(
                (f"{event.value}·{row} " * width)[:width] for row in range(self._rows())
            )
            self.query_one("#paint", Static).update(text)


if __name__ == "__main__":
    cells = int(sys.argv[sys.argv.index("--cells") + 1]) if "--cells" in sys.argv else 0
    Floor(cells).run()
