"""`cachetui [SOURCE ...]`: the app (the only path that imports Textual)."""

from __future__ import annotations

import argparse
import os

from cachetui.cli.common import (
    check_sources_exist,
    config_problems_to_stderr,
    service_for,
)
from cachetui.config import (
    ORIGIN_COMMAND_LINE,
    load_config,
)


def _set_colors(choice: str) -> None:
    """Textual reads its colour system when it is imported: set it first. An explicit choice
    wins over an inherited NO_COLOR; auto leaves the environment as the user has it."""
    if choice == "none":
        os.environ["NO_COLOR"] = "1"
    elif choice != "auto":
        os.environ.pop("NO_COLOR", None)
        os.environ["TEXTUAL_COLOR_SYSTEM"] = choice


def run_app(options: argparse.Namespace) -> int:
    config = load_config(options.config)
    check_sources_exist(options.sources)
    if options.color:
        config.color, config.origins["color"] = options.color, ORIGIN_COMMAND_LINE
    if options.env:
        config.env, config.origins["env"] = options.env, ORIGIN_COMMAND_LINE
    if options.no_mouse:
        config.mouse, config.origins["mouse"] = False, ORIGIN_COMMAND_LINE
    _set_colors(config.color)
    # A search result lands a few ms after the search box's own echo has used Textual's
    # frame tick, so at the default 60 frames/s it waited up to 17 ms for the next one.
    # Read by Textual at import; a user's own TEXTUAL_FPS wins.
    os.environ.setdefault("TEXTUAL_FPS", "120")
    from cachetui.tui.app import (
        CacheTUI,  # Textual is imported only here, after the colours are set
    )

    app = CacheTUI(service=service_for(options, config, config.env), config=config)
    app.run(mouse=config.mouse)
    config_problems_to_stderr(config)  # shown in the app too; here they outlive it
    return app.return_code or 0
