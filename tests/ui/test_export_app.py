"""Export (issue 8) from the app: `e`, a format and a file name write the filtered spec
list as CSV, JSON or Spack spec lines, checked against the sample data read with plain
json. From the command line: unit/test_export.py."""

from __future__ import annotations

from helpers import SAMPLE, SPEC_LINE, loaded_at, settle

from cachetui.tui.app import CacheTUI


async def export_from_the_app(tmp_path, keys_before: list[str], form_steps: int, name: str):
    """Filter with `keys_before`, press e, move `form_steps` down the formats, write `name`."""
    app = CacheTUI()
    async with loaded_at(app, (80, 24)) as pilot:
        await pilot.press(*keys_before)
        await settle(app, pilot)
        await pilot.press("e")
        await pilot.pause()
        app.screen.query_one("#export-path").value = str(tmp_path / name)
        if form_steps:
            await pilot.press("shift+tab")  # from the file name to the formats
            await pilot.press(*["down"] * form_steps, "enter", "tab")
        await pilot.press("enter")
        await settle(app, pilot)
        return app, [n.message for n in app._notifications]


async def test_the_app_exports_the_filtered_specs_as_csv(tmp_path) -> None:
    import csv

    app, notes = await export_from_the_app(
        tmp_path, ["slash", *"os=ubuntu22.04", "escape"], 0, "out.csv"
    )
    expected = SAMPLE.count(os="ubuntu22.04")
    assert expected == 80  # as written down from the sample files
    assert notes[-1] == f"Wrote {expected} specs to {tmp_path / 'out.csv'}"
    rows = list(csv.DictReader((tmp_path / "out.csv").open(encoding="utf-8")))
    assert len(rows) == expected and {r["os"] for r in rows} == {"ubuntu22.04"}
    assert sorted(r["hash"] for r in rows) == sorted(
        r["hash"] for r in SAMPLE.records if r["os"] == "ubuntu22.04"
    )


async def test_the_app_exports_json_and_spec_lines(tmp_path) -> None:
    import json

    app, notes = await export_from_the_app(tmp_path, ["slash", *"mpi4py", "escape"], 1, "out.csv")
    written = json.loads((tmp_path / "out.json").read_text())  # the name followed the format
    assert written["filter"] == {"query": "mpi4py", "selections": {}}
    assert len(written["specs"]) == SAMPLE.specs_of["py-mpi4py"] == 91 and {
        s["package"] for s in written["specs"]
    } == {"py-mpi4py"}
    app, notes = await export_from_the_app(tmp_path, [], 2, "all.txt")
    lines = (tmp_path / "all.txt").read_text().splitlines()
    assert len(lines) == SAMPLE.specs == 336 and all(SPEC_LINE.match(line) for line in lines)


async def test_export_asks_before_overwriting_and_names_unwritable_places(tmp_path) -> None:
    target = tmp_path / "keep.csv"
    target.write_text("mine\n")
    app = CacheTUI()
    async with loaded_at(app, (80, 24)) as pilot:
        await pilot.press("e")
        app.screen.query_one("#export-path").value = str(target)
        await pilot.press("enter")
        assert target.read_text() == "mine\n" and "exists: enter again" in str(
            app.screen.query_one("#export-hint").render()
        )
        await pilot.press("enter")
        await settle(app, pilot)
        assert target.read_text().startswith("package,version,")
        await pilot.press("e")
        app.screen.query_one("#export-path").value = str(tmp_path / "no" / "such" / "dir.csv")
        await pilot.press("enter")
        assert "no such directory" in str(app.screen.query_one("#export-hint").render())
        await pilot.press("escape")
        assert not (tmp_path / "no").exists()
