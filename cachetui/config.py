"""The user's settings: a TOML config file, $PAGER, and the theme last picked in the app.

Everything in the config file is optional and nothing in it can stop cachetui from
starting: each bad value becomes a `ConfigProblem` (a warning) and its default is used,
while the good values in the same file still apply. `origins` records where each value
came from, so `cachetui config` can answer "why is it like this?".

No Textual import here: the fast CLI sub-commands read the config too.
"""

from __future__ import annotations

import contextlib
import difflib
import enum
import json
import os
import re
import sys
import tempfile
import unicodedata
from collections.abc import Callable, Collection
from dataclasses import dataclass, field
from datetime import date, datetime, time
from pathlib import Path
from typing import cast

from platformdirs import user_config_dir, user_state_dir

from cachetui.pager import DEFAULT_PAGER
from cachetui.textsafe import visible

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on Python 3.10 only
    # Python 3.10 only; mypy (python_version 3.10) checks this branch from a 3.11 venv.
    import tomli as tomllib

COLORS = ("auto", "256", "truecolor", "none")
KEYS = ("sources", "theme", "color", "mouse", "pager", "keymap")

ORIGIN_DEFAULT = "default"
DEFAULT_THEME = "textual-dark"  # legible in 256 colours (tests/test_session.py)
ORIGIN_COMMAND_LINE = "command line"
ORIGIN_PAGER_ENV = "$PAGER"

# A config file is a few hundred bytes; refusing anything bigger keeps `--config /dev/zero`
# (or a mistaken multi-gigabyte file) from eating memory before TOML even sees it.
_CONFIG_LIMIT = 1 << 20
# The state file holds one short name; anything much bigger is not ours.
_STATE_LIMIT = 1 << 16
# More warnings than this about one file are summed up in one last line.
_MAX_PROBLEMS = 20
# Bad values are echoed in messages; a line of terminal is enough to recognise them.
_SHOWN = 60
# One key of a binding as Textual spells it: "y", "Y", "f2", "question_mark", "ctrl+b", "ctrl+@".
_URL = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*://")
_BARE_TOML_KEY = re.compile(r"[A-Za-z0-9_-]+")


class _Default(enum.Enum):
    """Marks an argument left out, where None has a meaning of its own."""

    STATE_PATH = enum.auto()


@dataclass
class ConfigProblem:
    """A value in the config file that was ignored, and why. Never fatal."""

    source: str  # the config file
    message: str  # names the key and what is wrong with it; already safe to print
    severity: str = "warning"  # always: the app starts with the default instead


@dataclass
class Config:
    sources: list[str] = field(default_factory=list)
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

    def origin(self, key: str) -> str:
        return self.origins.get(key, ORIGIN_DEFAULT)


def default_config_path() -> Path:
    return Path(user_config_dir("cachetui", appauthor=False)) / "config.toml"


def default_state_path() -> Path:
    return Path(user_state_dir("cachetui", appauthor=False)) / "state.json"


def load_config(
    path: str | Path | None = None,
    *,
    binding_ids: Collection[str] | None = None,
    state_path: str | Path | None | _Default = _Default.STATE_PATH,
) -> Config:
    """The settings from `path` (default: the user's config file), $PAGER and the state file.

    Never raises because of what a file holds: problems are collected in `.problems`.
    `binding_ids`, when given, are the keymap ids the app knows; others are reported.
    """
    explicit = path is not None
    file = Path(os.path.expanduser(path)) if path is not None else default_config_path()
    if state_path is _Default.STATE_PATH:
        state_path = default_state_path()
    config = Config(path=file, state_path=Path(state_path) if state_path is not None else None)
    table = _read_table(file, explicit, config.problems)
    if table is not None:
        _apply_table(table, config, str(file), binding_ids)
    if config.pager is None:
        _apply_pager_env(config)
    _apply_remembered_theme(config)
    return config


def check_keymap(config: Config, binding_ids: Collection[str]) -> None:
    """Drop the keymap entries whose binding id the app does not know, each with a problem.
    (The CLI reads the config before it imports the app, whose bindings are the ids.)"""
    source = config.origins.get("keymap", str(config.path))
    for bid in [bid for bid in config.keymap if bid not in binding_ids]:
        del config.keymap[bid]
        config.origins.pop("keymap." + bid, None)
        config.problems.append(
            ConfigProblem(
                source,
                f"keymap: unknown binding id {_name(bid)}{_misplaced_hint(bid, binding_ids)}",
            )
        )


def remember_theme(config: Config, theme: str) -> bool:
    """Save `theme` as the one to start with next time. False if it could not be saved."""
    path = config.state_path
    if path is None:
        return False
    # Read-update-write keeps whatever else a later version keeps in the same file.
    state = _read_state(path)
    state["theme"] = theme
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        _write_atomically(path, json.dumps(state, indent=2, sort_keys=True) + "\n")
    except OSError:
        # Remembering is a convenience: a read-only home must not break theme switching.
        return False
    return True


def describe(config: Config) -> list[tuple[str, str, str]]:
    """(key, value as TOML, origin) for every setting, for `cachetui config`."""
    # Unset values are shown as what the app then uses.
    sources_origin = (
        config.origin("sources") if config.sources else "default (the bundled sample data)"
    )
    rows = [
        ("sources", _toml(config.sources), sources_origin),
        ("theme", _toml(config.theme or DEFAULT_THEME), config.origin("theme")),
        ("color", _toml(config.color), config.origin("color")),
        ("mouse", _toml(config.mouse), config.origin("mouse")),
        ("pager", _toml(config.pager or DEFAULT_PAGER), config.origin("pager")),
    ]
    rows += [
        ("keymap." + _toml_key(bid), _toml(keys), config.origin("keymap." + bid))
        for bid, keys in config.keymap.items()
    ]
    # Paths, ids and values are the user's text: made safe here so no caller can forget.
    return [(visible(key), visible(value), visible(origin)) for key, value, origin in rows]


# -- Reading the files ----------------------------------------------------------------------


def _read_table(file: Path, explicit: bool, problems: list[ConfigProblem]) -> dict | None:
    """The parsed config file, or None (with a problem, unless an absent default) if unusable."""

    def problem(message: str) -> None:
        problems.append(ConfigProblem(str(file), message))

    try:
        with open(file, "rb") as stream:
            data = stream.read(_CONFIG_LIMIT + 1)
    except (FileNotFoundError, NotADirectoryError) as error:
        # Having no config file is the normal case; naming one that is missing is a mistake.
        if explicit:
            problem("cannot read: " + visible(error.strerror or str(error)))
        return None
    except (OSError, ValueError) as error:  # ValueError: a NUL byte in the path
        problem("cannot read: " + visible(getattr(error, "strerror", None) or str(error)))
        return None
    if len(data) > _CONFIG_LIMIT:
        problem(f"cannot read: larger than {_CONFIG_LIMIT // 1024} KiB, so not a config file")
        return None
    try:
        # utf-8-sig: Windows editors like to start a file with a byte-order mark, which
        # TOML itself does not allow; it is harmless, so accept it.
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as error:
        line = data[: error.start].count(b"\n") + 1
        problem(f"not UTF-8 text: byte 0x{data[error.start]:02x} at line {line}")
        return None
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as error:
        problem(
            "not valid TOML: " + visible(str(error))
        )  # tomllib's message has the line and column
    except RecursionError:
        problem("not valid TOML: nested too deeply")
    except ValueError as error:  # e.g. an integer longer than Python converts
        problem("not valid TOML: " + visible(str(error))[:200])
    return None


def _read_state(path: Path) -> dict:
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


# -- Applying values -----------------------------------------------------------------------


class _Bad(Exception):
    """A value unusable as a whole: the message says what it must be."""


_Report = Callable[[str], None]


def _apply_table(
    table: dict, config: Config, source: str, binding_ids: Collection[str] | None
) -> None:
    messages: list[str] = []
    report = messages.append

    checks: dict[str, Callable[[object, _Report], object]] = {
        "sources": _check_sources,
        "theme": _check_theme,
        "color": _check_color,
        "mouse": _check_mouse,
        "pager": _check_pager,
        "keymap": lambda raw, report: _check_keymap(raw, report, binding_ids),
    }
    for key, raw in table.items():
        check = checks.get(key)
        if check is None:
            report(f"unknown key {_name(key)}{_suggestion(key, KEYS)}")
            continue
        try:
            value = check(raw, report)
        except _Bad as bad:
            report(f"key {_name(key)}: {bad}")
            continue
        if key == "sources":
            # checks["sources"] is _check_sources, which returns list[str]
            value = _relative_to(Path(source).parent, cast("list[str]", value))
        setattr(config, key, value)
        config.origins[key] = source
        if key == "keymap":
            config.origins.update({"keymap." + bid: source for bid in config.keymap})
    # A generated or mangled file can hold thousands of bad entries; a screenful says enough.
    if len(messages) > _MAX_PROBLEMS:
        messages[_MAX_PROBLEMS - 1 :] = [f"and {len(messages) - _MAX_PROBLEMS + 1} more problems"]
    config.problems += [ConfigProblem(source, message) for message in messages]


def _apply_pager_env(config: Config) -> None:
    pager = os.environ.get("PAGER", "")
    if pager.strip():
        config.pager = pager
        config.origins["pager"] = ORIGIN_PAGER_ENV


def _apply_remembered_theme(config: Config) -> None:
    # The last theme picked in the app wins over the file: it is the user's latest word.
    if config.state_path is None:
        return
    theme = _read_state(config.state_path).get("theme")
    if isinstance(theme, str) and theme.strip():
        config.theme = theme
        config.origins["theme"] = f"remembered ({config.state_path})"


def _relative_to(folder: Path, sources: list[str]) -> list[str]:
    """A relative path in the config file means beside the file, wherever cachetui runs from."""
    return [s if _URL.match(s) or os.path.isabs(s) else str(folder / s) for s in sources]


def _check_sources(raw: object, report: _Report) -> list[str]:
    if isinstance(raw, str):  # one source written without the brackets: clear enough
        raw = [raw]
    if not isinstance(raw, list):
        raise _Bad(f"must be a list of strings, not {_shown(raw)}")
    sources = []
    for number, item in enumerate(raw, 1):
        if isinstance(item, str) and item.strip():
            # Only a leading "~" is expanded, which no URL has: URLs pass through as written.
            sources.append(os.path.expanduser(item))
        else:
            # Skip just this one: the other sources are still worth opening.
            report(
                f"key 'sources': item {number} must be a non-empty string, "
                f"not {_shown(item)}; skipped"
            )
    return sources


def _check_theme(raw: object, report: _Report) -> str:
    if not isinstance(raw, str) or not raw.strip():
        raise _Bad(f"must be a non-empty string, not {_shown(raw)}")
    return raw


def _check_color(raw: object, report: _Report) -> str:
    # `color = 256` without quotes means the obvious thing; so does "TrueColor".
    value = str(raw) if type(raw) is int and raw == 256 else raw
    if isinstance(value, str) and value.strip().lower() in COLORS:
        return value.strip().lower()
    raise _Bad(f"must be one of {', '.join(COLORS)}, not {_shown(raw)}")


def _check_mouse(raw: object, report: _Report) -> bool:
    if not isinstance(raw, bool):
        raise _Bad(f"must be true or false, not {_shown(raw)}")
    return raw


def _check_pager(raw: object, report: _Report) -> str:
    if not isinstance(raw, str) or not raw.strip():
        raise _Bad(f"must be a non-empty string (a shell command), not {_shown(raw)}")
    return raw


def _check_keymap(
    raw: object, report: _Report, binding_ids: Collection[str] | None
) -> dict[str, str]:
    if not isinstance(raw, dict):
        raise _Bad(f"must be a table of binding id = keys, not {_shown(raw)}")
    keymap = {}
    for bid, keys in raw.items():
        if binding_ids is not None and bid not in binding_ids:
            report(f"keymap: unknown binding id {_name(bid)}{_misplaced_hint(bid, binding_ids)}")
        elif not isinstance(keys, str) or not keys.strip():
            report(f"keymap: {_name(bid)} must be a non-empty string of keys, not {_shown(keys)}")
        elif (normalised := _normalise_keys(keys)) is None:
            report(
                f"keymap: bad keys for {_name(bid)}: {_shown(keys)} "
                '(key names such as "y", "f2" or "ctrl+b", separated by commas)'
            )
        else:
            keymap[bid] = normalised
    return keymap


def _misplaced_hint(bid: str, binding_ids: Collection[str]) -> str:
    # A top-level key written after the [keymap] header lands in the keymap: a classic
    # TOML slip, and "unknown binding id 'theme'" alone would not explain it.
    if bid in KEYS:
        return f" (top-level keys such as {_name(bid)} go before the [keymap] table)"
    return _suggestion(bid, binding_ids)


def _normalise_keys(keys: str) -> str | None:
    """`keys` as Textual reads them ("f2,ctrl+b"), or None if one is not a key name: a
    made-up name would take the binding's key away and give it one that never fires."""
    names = [name.strip() for name in keys.split(",")]
    return ",".join(names) if all(_is_key(name) for name in names) else None


# Textual's names of the keys that are not characters (textual.keys.Keys), and modifiers.
_SPECIAL_KEYS = frozenset(
    {
        "backspace",
        "delete",
        "down",
        "end",
        "enter",
        "escape",
        "home",
        "insert",
        "left",
        "pagedown",
        "pageup",
        "return",
        "right",
        "space",
        "tab",
        "up",
        *(f"f{n}" for n in range(1, 25)),
    }
)
_MODIFIERS = frozenset({"ctrl", "shift", "alt", "meta", "super", "hyper"})


def _is_key(name: str) -> bool:
    """A key as Textual names it: `y`, `Y`, `?`, `question_mark`, `f2`, `ctrl+b`, `shift+tab`."""
    if len(name) == 1:  # a character as typed, `+` included
        return name.isprintable() and not name.isspace()
    *modifiers, key = name.split("+")
    if not key or any(m not in _MODIFIERS for m in modifiers):
        return False
    if len(key) == 1:
        return key.isprintable() and not key.isspace()
    return key in _SPECIAL_KEYS or _is_character_name(key)


def _is_character_name(key: str) -> bool:
    """Textual names a punctuation key by its Unicode name: `question_mark`, `full_stop`."""
    spoken = key.upper().replace("_", " ")
    for candidate in (spoken, spoken.replace(" ", "-")):  # HYPHEN-MINUS
        try:
            unicodedata.lookup(candidate)
            return key == key.lower()
        except KeyError:
            continue
    return False


# -- Showing values ------------------------------------------------------------------------


def _name(text: str) -> str:
    """A key or id from the file, quoted, escaped and short enough to read."""
    return f"'{_shorten(visible(text[: _SHOWN * 2]))}'"


def _suggestion(word: str, candidates: Collection[str]) -> str:
    close = difflib.get_close_matches(word[: _SHOWN * 2], list(candidates), n=1)
    return f" (did you mean {_name(close[0])}?)" if close else ""


def _shown(value: object) -> str:
    """A bad value as the user wrote it (near enough), escaped and shortened."""
    return _shorten(visible(_toml(value, brief=True)))


def _shorten(text: str) -> str:
    return text if len(text) <= _SHOWN else text[: _SHOWN - 1] + "…"


def _toml(value: object, brief: bool = False, depth: int = 0) -> str:
    """`value` written as TOML. `brief`: only as much as a message shows, whatever its size."""
    if value is None:
        return "(not set)"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        text = value[: _SHOWN * 2] if brief else value
        # Quotes and backslashes escaped as TOML does; control characters are left for
        # `visible`, so they read the same here as everywhere else in cachetui.
        return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'
    if isinstance(value, (int, float)):
        return repr(value)  # TOML spells inf and nan as Python does
    if isinstance(value, (datetime, date, time)):
        return value.isoformat()
    if brief and depth >= 3:  # a hostile file can nest thousands deep
        return "…"
    if isinstance(value, list):
        items = value[:_SHOWN] if brief else value
        more = ", …" if len(items) < len(value) else ""
        return "[" + ", ".join(_toml(item, brief, depth + 1) for item in items) + more + "]"
    if isinstance(value, dict):
        pairs = list(value.items())
        shown = pairs[:_SHOWN] if brief else pairs
        more = ", …" if len(shown) < len(pairs) else ""
        return (
            "{"
            + ", ".join(
                f"{_toml_key(k[:_SHOWN] if brief else k)} = {_toml(v, brief, depth + 1)}"
                for k, v in shown
            )
            + more
            + "}"
        )
    return repr(value)


def _toml_key(key: str) -> str:
    return key if _BARE_TOML_KEY.fullmatch(key) else _toml(key)
