"""Export (issue 8): the filtered spec list as CSV, JSON or Spack spec lines, from the CLI
and from the app; checked against the sample data read with plain json."""

from __future__ import annotations

import re

from conftest import SAMPLE

from cachetui import cli

SPEC_LINE = re.compile(r"^(?P<package>[^@\s]+)@(?P<version>[^\s+~]+)(?P<variants>.*?) arch=(?P<platform>[^-\s]+)-(?P<os>[^-\s]+)-(?P<target>\S+)"
                       r" /(?P<hash>[a-z2-7]{32})(?: %(?P<compiler>\S+))?$")


def test_search_specs_writes_one_spack_spec_line_per_matching_spec(capsys) -> None:
    assert cli.main(["search", "os=ubuntu22.04", "--specs", "--limit", "0", "--no-cache"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == SAMPLE.count(os="ubuntu22.04") == 80
    by_hash = {r["hash"]: r for r in SAMPLE.records}
    for line in lines:
        match = SPEC_LINE.match(line)
        assert match, line
        record = by_hash[match["hash"]]
        assert (match["package"], match["version"], match["os"], match["target"], match["platform"]) == (
            SAMPLE.package_of[match["hash"]], record["versions"][0] if "versions" in record else record["version"],
            record["os"], record["target"], record["platform"])
        assert match["compiler"] == record["compiler"].replace("@=", "@")


async def export_from_the_app(tmp_path, keys_before: list[str], form_steps: int, name: str):
    """Filter with `keys_before`, press e, move `form_steps` down the formats, write `name`."""

    from conftest import settle

    from cachetui.tui.app import CacheTUI

    app = CacheTUI()
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(app, pilot)
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

    app, notes = await export_from_the_app(tmp_path, ["slash", *"os=ubuntu22.04", "escape"], 0, "out.csv")
    expected = SAMPLE.count(os="ubuntu22.04")
    assert expected == 80  # as written down from the sample files
    assert notes[-1] == f"Wrote {expected} specs to {tmp_path / 'out.csv'}"
    rows = list(csv.DictReader((tmp_path / "out.csv").open(encoding="utf-8")))
    assert len(rows) == expected and {r["os"] for r in rows} == {"ubuntu22.04"}
    assert sorted(r["hash"] for r in rows) == sorted(r["hash"] for r in SAMPLE.records if r["os"] == "ubuntu22.04")


async def test_the_app_exports_json_and_spec_lines(tmp_path) -> None:
    import json

    app, notes = await export_from_the_app(tmp_path, ["slash", *"mpi4py", "escape"], 1, "out.csv")
    written = json.loads((tmp_path / "out.json").read_text())  # the name followed the format
    assert written["filter"] == {"query": "mpi4py", "selections": {}}
    assert len(written["specs"]) == SAMPLE.specs_of["py-mpi4py"] == 91 and {s["package"] for s in written["specs"]} == {"py-mpi4py"}
    app, notes = await export_from_the_app(tmp_path, [], 2, "all.txt")
    lines = (tmp_path / "all.txt").read_text().splitlines()
    assert len(lines) == SAMPLE.specs == 336 and all(SPEC_LINE.match(line) for line in lines)


async def test_export_asks_before_overwriting_and_names_unwritable_places(tmp_path) -> None:
    from conftest import settle

    from cachetui.tui.app import CacheTUI

    target = tmp_path / "keep.csv"
    target.write_text("mine\n")
    app = CacheTUI()
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(app, pilot)
        await pilot.press("e")
        app.screen.query_one("#export-path").value = str(target)
        await pilot.press("enter")
        assert target.read_text() == "mine\n" and "exists: enter again" in str(app.screen.query_one("#export-hint").render())
        await pilot.press("enter")
        await settle(app, pilot)
        assert target.read_text().startswith("package,version,")
        await pilot.press("e")
        app.screen.query_one("#export-path").value = str(tmp_path / "no" / "such" / "dir.csv")
        await pilot.press("enter")
        assert "no such directory" in str(app.screen.query_one("#export-hint").render())
        await pilot.press("escape")
        assert not (tmp_path / "no").exists()


def test_an_export_keeps_the_files_mode_writes_through_a_symlink_and_a_new_file_follows_the_umask(tmp_path) -> None:
    import os
    import stat

    from cachetui.output import replacing

    def mode(path) -> int:
        return stat.S_IMODE(path.stat().st_mode)

    old = os.umask(0o027)
    try:
        with replacing(tmp_path / "new.txt") as out:
            out.write("a\n")
        assert mode(tmp_path / "new.txt") == 0o640
        kept = tmp_path / "kept.txt"
        kept.write_text("old\n")
        kept.chmod(0o604)
        with replacing(kept) as out:
            out.write("b\n")
        assert kept.read_text() == "b\n" and mode(kept) == 0o604
        real, link = tmp_path / "real.txt", tmp_path / "link.txt"
        real.write_text("old\n")
        link.symlink_to(real)
        with replacing(link) as out:
            out.write("c\n")
        assert link.is_symlink() and real.read_text() == "c\n"
        try:  # a failed write leaves the file as it was, and no temporary file behind
            with replacing(kept) as out:
                out.write("half")
                raise OSError("disk full")
        except OSError:
            pass
        assert kept.read_text() == "b\n" and sorted(p.name for p in tmp_path.iterdir()) == ["kept.txt", "link.txt", "new.txt", "real.txt"]
    finally:
        os.umask(old)


def test_search_specs_cut_by_the_default_limit_says_so_on_stderr(capsys) -> None:
    assert cli.main(["search", "*", "--specs", "--no-cache"]) == 0  # the default --limit 100
    captured = capsys.readouterr()
    assert len(captured.out.splitlines()) == 100
    assert captured.err.strip() == f"cachetui: --limit 100: {336 - 100} more matching specs not written (--limit 0 writes all)"
