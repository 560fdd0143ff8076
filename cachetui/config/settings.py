"""What the settings are: their names, the values they may take, and where each came from."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from cachetui.model import LoadProblem

COLORS = ("auto", "256", "truecolor", "none")
KEYS = ("sources", "env", "theme", "color", "mouse", "pager", "keymap")

ORIGIN_DEFAULT = "default"
DEFAULT_THEME = "textual-dark"  # legible in 256 colours (tests/ui/test_session.py)
ORIGIN_COMMAND_LINE = "command line"
ORIGIN_PAGER_ENV = "$PAGER"


@dataclass
class ConfigProblem:
    """A value in the config file that was ignored, and why. Never fatal."""

    source: str  # the config file
    message: str  # names the key and what is wrong with it; already safe to print
    severity: str = "warning"  # always: the app starts with the default instead


@dataclass
class ChosenSources:
    """What is read and where it came from (sources.py `settle_sources`)."""

    sources: list[str]  # `spack` expanded; empty: nothing, or the bundled sample data (`sample`)
    origin: str  # for `cachetui config`: the command line, the file, Spack's mirrors, default
    summary: str  # the same in a few words, for the status line: "Spack's mirrors"
    problems: list[LoadProblem] = field(default_factory=list)  # reading Spack's configuration
    sample: bool = False  # none given and no Spack mirror: the bundled sample data


@dataclass
class Config:
    sources: list[str] = field(default_factory=list)
    env: str | None = None  # an environment the app checks against the cache (--env)
    theme: str | None = None
    color: str = "auto"
    mouse: bool = True
    pager: str | None = None
    keymap: dict[str, str] = field(default_factory=dict)
    # key -> where its value came from: "default", the config file's path, "command line",
    # "$PAGER" or "remembered (<state path>)". Keymap entries are under "keymap.<id>".
    origins: dict[str, str] = field(default_factory=dict)
    problems: list[ConfigProblem] = field(default_factory=list)
    path: Path | None = None  # the config file read (or that would have been read)
    state_path: Path | None = None  # where the picked theme is remembered; None: it is not
    chosen: ChosenSources | None = None  # the sources read, once settled (sources.py)

    def origin(self, key: str) -> str:
        return self.origins.get(key, ORIGIN_DEFAULT)

    @property
    def sources_origin(self) -> str | None:
        """Where the sources read came from, in a few words (None: not settled yet)."""
        return self.chosen.summary if self.chosen is not None else None
