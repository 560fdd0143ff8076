"""Bad input in the app: the status line counts the load problems of the broken files
(tests/fixtures/bad_inputs/, messages in tests/fixtures/bad_inputs.expected.json) and the
problems screen lists each file and its reason. The rest: unit/test_bad_inputs.py."""

from __future__ import annotations

import json

from helpers import BAD_INPUTS, BAD_INPUTS_EXPECTED, loaded_at, screen_text, status

from cachetui.service import IndexService
from cachetui.tui.app import CacheTUI
from cachetui.tui.screens.problems import ProblemsScreen

CORPUS = BAD_INPUTS
EXPECTED = json.loads(BAD_INPUTS_EXPECTED.read_text())


async def test_the_app_counts_the_problems_and_lists_each_file_and_reason(tmp_path):
    count = sum(len(v) for v in EXPECTED["problems"].values())
    app = CacheTUI(service=IndexService([str(CORPUS)], cache_dir=tmp_path / "cache"))
    async with loaded_at(app, (200, 60)) as pilot:
        assert status(app) == f"4 of 4 packages · 5 of 5 specs · {count} load problems (p)"
        await pilot.press("p")
        await pilot.pause()
        assert isinstance(app.screen, ProblemsScreen)
        painted = screen_text(app)
        for name in EXPECTED["problems"]:
            assert name in painted, name
        assert "empty file" in painted and "not UTF-8 text (bad byte at offset 15)" in painted
