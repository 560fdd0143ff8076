"""The state file: the theme last picked in the app, remembered for the next start."""

from __future__ import annotations

import contextlib
import json
import os
import tempfile
from pathlib import Path

from platformdirs import user_state_dir

from cachetui.config.settings import Config

# The state file holds one short name; anything much bigger is not ours.
_STATE_LIMIT = 1 << 16


def default_state_path() -> Path:
    return Path(user_state_dir("cachetui", appauthor=False)) / "state.json"


def remember_theme(config: Config, theme: str) -> bool:
    """Save `theme` as the one to start with next time. False if it could not be saved."""
    path = config.state_path
    if path is None:
        return False
    # Read-update-write keeps whatever else a later version keeps in the same file.
    state = read_state(path)
    state["theme"] = theme
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        _write_atomically(path, json.dumps(state, indent=2, sort_keys=True) + "\n")
    except OSError:
        # Remembering is a convenience: a read-only home must not break theme switching.
        return False
    return True


def read_state(path: Path) -> dict:
    """The state file's contents, or {} if it is missing, unreadable or not ours.

    It only caches a choice made in the app and is rewritten at the next choice, so a
    damaged one is not worth a warning.
    """
    try:
        with open(path, "rb") as stream:
            data = stream.read(_STATE_LIMIT + 1)
        if len(data) > _STATE_LIMIT:
            return {}
        state = json.loads(data)
    except (OSError, ValueError, RecursionError):
        return {}
    return state if isinstance(state, dict) else {}


def _write_atomically(path: Path, text: str) -> None:
    """Write `text` to `path` so that a reader sees the old file or the new, never half."""
    fd, temp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as stream:
            stream.write(text)
        os.replace(temp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temp)
        raise
