"""The `[keymap]` table: binding id = keys, each id one the app knows and each key one
Textual can name."""

from __future__ import annotations

import unicodedata
from collections.abc import Collection

from cachetui.config.checks import BadValue, Report
from cachetui.config.settings import KEYS, Config, ConfigProblem
from cachetui.config.toml_text import quoted_name, shown, suggestion


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
                f"keymap: unknown binding id {quoted_name(bid)}{_misplaced_hint(bid, binding_ids)}",
            )
        )


def check_keymap_table(
    raw: object, report: Report, binding_ids: Collection[str] | None
) -> dict[str, str]:
    """The `[keymap]` table's usable entries (`binding_ids`: the ids the app knows, when
    known), the others reported."""
    if not isinstance(raw, dict):
        raise BadValue(f"must be a table of binding id = keys, not {shown(raw)}")
    keymap = {}
    for bid, keys in raw.items():
        if binding_ids is not None and bid not in binding_ids:
            report(
                f"keymap: unknown binding id {quoted_name(bid)}{_misplaced_hint(bid, binding_ids)}"
            )
        elif not isinstance(keys, str) or not keys.strip():
            report(
                f"keymap: {quoted_name(bid)} must be a non-empty string of keys, not {shown(keys)}"
            )
        elif (normalised := _normalise_keys(keys)) is None:
            report(
                f"keymap: bad keys for {quoted_name(bid)}: {shown(keys)} "
                '(key names such as "y", "f2" or "ctrl+b", separated by commas)'
            )
        else:
            keymap[bid] = normalised
    return keymap


def _misplaced_hint(bid: str, binding_ids: Collection[str]) -> str:
    # A top-level key written after the [keymap] header lands in the keymap: a classic
    # TOML slip, and "unknown binding id 'theme'" alone would not explain it.
    if bid in KEYS:
        return f" (top-level keys such as {quoted_name(bid)} go before the [keymap] table)"
    return suggestion(bid, binding_ids)


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
