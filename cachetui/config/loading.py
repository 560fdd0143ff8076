"""Loading the settings: the TOML config file, $PAGER and the state file, in that order.

Each value read from the file goes through its check (checks.py, keymap.py): a good one is
set with its origin, a bad one becomes a `ConfigProblem` and its default stays.
"""

from __future__ import annotations

import enum
import os
import sys
from collections.abc import Callable, Collection
from pathlib import Path
from typing import cast

from platformdirs import user_config_dir

from cachetui.config.checks import (
    BadValue,
    Report,
    check_color,
    check_env,
    check_mouse,
    check_pager,
    check_sources,
    check_theme,
)
from cachetui.config.keymap import check_keymap_table
from cachetui.config.settings import KEYS, ORIGIN_PAGER_ENV, Config, ConfigProblem
from cachetui.config.sources import SPACK_SOURCE
from cachetui.config.state import default_state_path, read_state
from cachetui.config.toml_text import quoted_name, suggestion
from cachetui.textsafe import visible
from cachetui.urls import has_scheme

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on Python 3.10 only
    # Python 3.10 only; mypy (python_version 3.10) checks this branch from a 3.11 venv.
    import tomli as tomllib

# A config file is a few hundred bytes; refusing anything bigger keeps `--config /dev/zero`
# (or a mistaken multi-gigabyte file) from eating memory before TOML even sees it.
_CONFIG_LIMIT = 1 << 20
# More warnings than this about one file are summed up in one last line.
_MAX_PROBLEMS = 20


class _Default(enum.Enum):
    """Marks an argument left out, where None has a meaning of its own."""

    STATE_PATH = enum.auto()


def default_config_path() -> Path:
    return Path(user_config_dir("cachetui", appauthor=False)) / "config.toml"


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


# -- Reading the file ------------------------------------------------------------------------


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


# -- Applying values -----------------------------------------------------------------------


def _apply_table(
    table: dict, config: Config, source: str, binding_ids: Collection[str] | None
) -> None:
    messages: list[str] = []
    report = messages.append

    checks: dict[str, Callable[[object, Report], object]] = {
        "sources": check_sources,
        "env": check_env,
        "theme": check_theme,
        "color": check_color,
        "mouse": check_mouse,
        "pager": check_pager,
        "keymap": lambda raw, report: check_keymap_table(raw, report, binding_ids),
    }
    for key, raw in table.items():
        check = checks.get(key)
        if check is None:
            report(f"unknown key {quoted_name(key)}{suggestion(key, KEYS)}")
            continue
        try:
            value = check(raw, report)
        except BadValue as bad:
            report(f"key {quoted_name(key)}: {bad}")
            continue
        if key == "sources":
            # checks["sources"] is check_sources, which returns list[str]
            value = _relative_to(Path(source).parent, cast("list[str]", value))
        elif key == "env":  # a relative path is beside the file, as the sources are
            value = _relative_to(Path(source).parent, [cast(str, value)])[0]
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
    theme = read_state(config.state_path).get("theme")
    if isinstance(theme, str) and theme.strip():
        config.theme = theme
        config.origins["theme"] = f"remembered ({config.state_path})"


def _relative_to(folder: Path, sources: list[str]) -> list[str]:
    """A relative path in the config file means beside the file, wherever cachetui runs from
    (`spack` is Spack's mirrors; a directory named so is `./spack`)."""
    return [
        s if has_scheme(s) or os.path.isabs(s) or s == SPACK_SOURCE else str(folder / s)
        for s in sources
    ]
