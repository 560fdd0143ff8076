"""Describing the settings for `cachetui config`: each value and where it came from."""

from __future__ import annotations

from cachetui.config.settings import DEFAULT_THEME, Config
from cachetui.config.sources import ORIGIN_SAMPLE
from cachetui.config.toml_text import as_toml, toml_key
from cachetui.pager import DEFAULT_PAGER
from cachetui.textsafe import visible


def describe(config: Config) -> list[tuple[str, str, str]]:
    """(key, value as TOML, origin) for every setting, for `cachetui config`."""
    # Unset values are shown as what the app then uses; the sources, once settled
    # (sources.py), as read: `spack` expanded, or Spack's mirrors when none are given.
    chosen = config.chosen
    if chosen is not None:
        sources = ("sources", as_toml(chosen.sources), chosen.origin)
    else:
        sources = ("sources", as_toml(config.sources), config.origin("sources"))
        if not config.sources:
            sources = ("sources", "[]", ORIGIN_SAMPLE)
    rows = [
        sources,
        ("env", as_toml(config.env), config.origin("env")),
        ("theme", as_toml(config.theme or DEFAULT_THEME), config.origin("theme")),
        ("color", as_toml(config.color), config.origin("color")),
        ("mouse", as_toml(config.mouse), config.origin("mouse")),
        ("pager", as_toml(config.pager or DEFAULT_PAGER), config.origin("pager")),
    ]
    rows += [
        ("keymap." + toml_key(bid), as_toml(keys), config.origin("keymap." + bid))
        for bid, keys in config.keymap.items()
    ]
    # Paths, ids and values are the user's text: made safe here so no caller can forget.
    return [(visible(key), visible(value), visible(origin)) for key, value, origin in rows]
