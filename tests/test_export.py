"""Export (issue 8): the filtered spec list as CSV, JSON or Spack spec lines, from the CLI
and from the app; checked against the sample data read with plain json."""

from __future__ import annotations

import re

from cachetui import cli
from conftest import SAMPLE

SPEC_LINE = re.compile(r"^(?P<package>[^@\s]+)@(?P<version>\S+)(?: %(?P<compiler>\S+))? arch=(?P<platform>[^-\s]+)-(?P<os>[^-\s]+)-(?P<target>\S+) /(?P<hash>[a-z2-7]{32})$")


def test_search_specs_writes_one_spack_spec_line_per_matching_spec(capsys) -> None:
    assert cli.main(["search", "os=ubuntu22.04", "--specs", "--limit", "0", "--no-cache"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == SAMPLE.count(os="ubuntu22.04")
    by_hash = {r["hash"]: r for r in SAMPLE.records}
    for line in lines:
        match = SPEC_LINE.match(line)
        assert match, line
        record = by_hash[match["hash"]]
        assert (match["package"], match["version"], match["os"], match["target"], match["platform"]) == (
            SAMPLE.package_of[match["hash"]], record["versions"][0] if "versions" in record else record["version"],
            record["os"], record["target"], record["platform"])
        assert match["compiler"] == record["compiler"].replace("@=", "@")
