"""The one list of key bindings that the help screen, the footer and the command palette
all read, so they cannot disagree: every binding has an id, a short description (the
footer's and the palette's name for it) and a tooltip (what it does, for help)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, cast

from textual.binding import Binding

if TYPE_CHECKING:
    from textual.dom import DOMNode

_KEY_NAMES = {
    "question_mark": "?",
    "slash": "/",
    "space": "space",
    "exclamation_mark": "!",
    "full_stop": ".",
}


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
                entries.append(
                    KeyEntry(
                        group=getattr(owner, "HELP_GROUP", owner.__name__),
                        keys=key_label(keymap.get(binding.id, binding.key)),
                        description=binding.description,
                        tooltip=binding.tooltip or binding.description,
                        id=binding.id,
                        action=binding.action,
                        owner=owner,
                    )
                )
    return entries


def binding_ids(owners: list[type]) -> list[str]:
    return [entry.id for entry in key_entries(owners)]


def keymap_clashes(keymap: Mapping[str, str], chains: list[list[type]]) -> list[tuple[str, str]]:
    """(binding id, why) for each key the keymap gives a binding that another binding in
    force at the same time also has (Textual then lets one win, silently). Overlaps the
    defaults already have (enter in a list and in the filters) are by design, not reported.
    `keymap` is normalised as Textual normalises it (`question_mark`, not `?`)."""

    def keys_of(binding: Binding, mapped: bool) -> set[str]:
        # A binding without an id has no keymap entry: it keeps its own keys.
        if mapped and binding.id is not None:
            source = keymap.get(binding.id, binding.key)
        else:
            source = binding.key
        return {key.strip() for key in source.split(",")}

    found: dict[tuple[str, ...], tuple[str, str]] = {}
    for chain in chains:
        # (id, binding) for each binding with an id; the owners are Textual DOM node classes.
        bindings = [
            (b.id, b)
            for owner in chain
            for b in cast("type[DOMNode]", owner).BINDINGS
            if isinstance(b, Binding) and b.id
        ]
        for remapped_id, remapped in ((bid, b) for bid, b in bindings if bid in keymap):
            for other_id, other in bindings:
                if other_id == remapped_id:
                    continue
                shared = keys_of(remapped, True) & keys_of(other, True)
                shared -= keys_of(remapped, False) & keys_of(other, False)  # as shipped
                for key in sorted(shared):
                    pair = tuple(sorted((remapped_id, other_id)))
                    found.setdefault(
                        (*pair, key),
                        (
                            remapped_id,
                            f"keymap: {remapped_id} = {key_label(key)!r} is also the key of "
                            f"{other.id} ({other.description}) where both apply; "
                            "give one of them another key",
                        ),
                    )
    return list(found.values())
