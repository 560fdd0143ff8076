"""The main screen's key bindings: each with an id (a keymap names it) and a description
(the footer, the help and the command palette show it)."""

from __future__ import annotations

from textual.binding import Binding, BindingType

MAIN_BINDINGS: list[BindingType] = [
    Binding(
        "slash",
        "focus_search",
        "Search",
        # Priority: it runs as the key arrives, so the keys typed after it in one burst (a
        # paste, a slow SSH link, a browser's websocket frame) reach the search box.
        # MainScreen.check_action lets `/` through to a text box that has the focus.
        priority=True,
        id="focus-search",
        tooltip="Focus the search box (Spack spec syntax; /prefix finds hashes)",
    ),
    Binding(
        "tab",
        "app.focus_next",
        "Next pane",
        show=False,
        id="focus-next",
        tooltip="Move to the next pane",
    ),
    Binding(
        "shift+tab",
        "app.focus_previous",
        "Previous pane",
        show=False,
        id="focus-previous",
        tooltip="Move to the previous pane",
    ),
    Binding(
        "escape",
        "leave_search",
        "Leave search",
        show=False,
        id="leave-search",
        tooltip="Leave the search box for the package list",
    ),
    Binding(
        "f,f2",
        "toggle_filters",
        "Filters",
        id="toggle-filters",
        tooltip="Show or hide the filters (stacks, OS, targets, compilers, ...)",
    ),
    Binding(
        "d,f3",
        "toggle_detail",
        "Detail",
        id="toggle-detail",
        tooltip="Show or hide the detail pane of the highlighted spec",
    ),
    Binding(
        "t",
        "switch_tag",
        "Tag",
        show=False,
        id="switch-tag",
        tooltip="Switch to another cache tag (develop, a release, a snapshot), or all of them",
    ),
    Binding(
        "s",
        "toggle_stats",
        "Stats",
        id="toggle-stats",
        tooltip=(
            "Show or hide stats of what the filters and the search match: per stack, OS, target, "
            "compiler; stack x target; top packages"
        ),
    ),
    Binding(
        "c",
        "compare",
        "Compare",
        show=False,
        id="compare-tags",
        tooltip="Compare two cache tags: specs added, removed and rebuilt, per package",
    ),
    Binding(
        "e",
        "export",
        "Export",
        show=False,
        id="export-specs",
        tooltip=(
            "Write the specs the filters and the search match to a file: CSV, JSON or Spack spec "
            "lines"
        ),
    ),
    Binding(
        "E",
        "coverage",
        "Environment",
        show=False,
        id="show-coverage",
        tooltip=(
            "With --env: the environment's specs, each a hit or a miss, the share the cache "
            "covers, and a miss's nearest cached specs with what differs"
        ),
    ),
    Binding(
        "x",
        "clear_filters",
        "Clear filters",
        show=False,
        id="clear-filters",
        tooltip="Clear every filter (the search text stays)",
    ),
    Binding(
        "y",
        "copy('hash')",
        "Copy hash",
        id="copy-hash",
        tooltip="Copy the highlighted spec's full hash (OSC 52; shown too)",
    ),
    Binding(
        "Y",
        "copy('install')",
        "Copy install",
        show=False,
        id="copy-install",
        tooltip="Copy the highlighted spec's install command",
    ),
    Binding(
        "U",
        "copy('url')",
        "Copy URL",
        show=False,
        id="copy-url",
        tooltip="Copy the highlighted spec's tarball URL, when known",
    ),
    Binding(
        "v",
        "view_record",
        "View JSON",
        show=False,
        id="view-record",
        tooltip="Open the highlighted spec's full record (JSON) in $PAGER",
    ),
    Binding(
        "p",
        "problems",
        "Problems",
        show=False,
        id="show-problems",
        tooltip="List every load problem (file and reason)",
    ),
]
