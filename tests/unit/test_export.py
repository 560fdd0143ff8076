"""Export (issue 8) from the CLI: the filtered spec list as CSV, JSON or Spack spec lines,
checked against the sample data read with plain json; and how an export replaces a file.
From the app: ui/test_export_app.py."""

from __future__ import annotations

from helpers import SAMPLE, SPEC_LINE

from cachetui import cli


def test_search_specs_writes_one_spack_spec_line_per_matching_spec(capsys) -> None:
    assert cli.main(["search", "os=ubuntu22.04", "--specs", "--limit", "0", "--no-cache"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == SAMPLE.count(os="ubuntu22.04") == 80
    by_hash = {r["hash"]: r for r in SAMPLE.records}
    for line in lines:
        match = SPEC_LINE.match(line)
        assert match, line
        record = by_hash[match["hash"]]
        assert (
            match["package"],
            match["version"],
            match["os"],
            match["target"],
            match["platform"],
        ) == (
            SAMPLE.package_of[match["hash"]],
            record["versions"][0] if "versions" in record else record["version"],
            record["os"],
            record["target"],
            record["platform"],
        )
        assert match["compiler"] == record["compiler"].replace("@=", "@")


def test_an_export_keeps_the_files_mode_writes_through_a_symlink_and_a_new_file_follows_the_umask(
    tmp_path,
) -> None:
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
        assert kept.read_text() == "b\n" and sorted(p.name for p in tmp_path.iterdir()) == [
            "kept.txt",
            "link.txt",
            "new.txt",
            "real.txt",
        ]
    finally:
        os.umask(old)


def test_search_specs_cut_by_the_default_limit_says_so_on_stderr(capsys) -> None:
    assert cli.main(["search", "*", "--specs", "--no-cache"]) == 0  # the default --limit 100
    captured = capsys.readouterr()
    assert len(captured.out.splitlines()) == 100
    assert captured.err.strip() == (
        f"cachetui: --limit 100: {336 - 100} more matching specs not written (--limit 0 writes all)"
    )
