"""The one list of key bindings that the help screen, the footer and the command palette
all read, so they cannot disagree: every binding has an id, a short description (the
footer's and the palette's name for it) and a tooltip (what it does, for help)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from textual.binding import Binding

_KEY_NAMES = {"question_mark": "?", "slash": "/", "space": "space", "exclamation_mark": "!", "full_stop": "."}


@dataclass(frozen=True)
class KeyEntry:
    group: str  # where it works: "anywhere", "main", "filters", ...
    keys: str  # as a user reads them: "?, f1"
    description: str  # short: the footer's and the palette's name
    tooltip: str  # what it does
    id: str  # the binding id a keymap names
    action: str
    owner: type


def key_label(keys: str) -> str:
    """Textual's key names as a user types them: `question_mark,f1` is `?, f1`."""
    return ", ".join(_KEY_NAMES.get(key.strip(), key.strip()) for key in keys.split(","))


def key_entries(owners: list[type], keymap: Mapping[str, str] | None = None) -> list[KeyEntry]:
    """Every binding with an id, in owner order, with the keys the keymap gives it."""
    entries, seen = [], set()
    keymap = keymap or {}
    for owner in owners:
        for binding in getattr(owner, "BINDINGS", []):
            if isinstance(binding, Binding) and binding.id and binding.id not in seen:
                seen.add(binding.id)
                entries.append(KeyEntry(
                    group=getattr(owner, "HELP_GROUP", owner.__name__),
                    keys=key_label(keymap.get(binding.id, binding.key)),
                    description=binding.description,
                    tooltip=binding.tooltip or binding.description,
                    id=binding.id,
                    action=binding.action,
                    owner=owner,
                ))
    return entries


def binding_ids(owners: list[type]) -> list[str]:
    return [entry.id for entry in key_entries(owners)]
