"""The floor: a bare Textual app that only echoes an Input into a Static.

Whatever a keystroke costs here is the cost of Textual, the terminal and tmux on this
machine; cachetui's keystroke figures are quoted as ratios to it.
"""

from textual.app import App, ComposeResult
from textual.widgets import Input, Static


class Floor(App):
    def compose(self) -> ComposeResult:
        yield Input(id="in")
        yield Static("echo: ", id="out", markup=False)

    def on_input_changed(self, event: Input.Changed) -> None:
        self.query_one("#out", Static).update(f"echo: {event.value}|")


if __name__ == "__main__":
    Floor().run()
