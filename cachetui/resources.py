"""Where the files that ship with cachetui live.

In a wheel, `styles/` and `sample_data/` are copied inside the package
(pyproject's force-include); in a source checkout they sit beside it.
"""

from __future__ import annotations

from pathlib import Path

_PACKAGE_DIR = Path(__file__).resolve().parent


def resource_dir(name: str) -> Path:
    for candidate in (_PACKAGE_DIR / name, _PACKAGE_DIR.parent / name):
        if candidate.is_dir():
            return candidate
    raise FileNotFoundError(
        f"cachetui is missing its {name!r} directory (looked beside {_PACKAGE_DIR})"
    )


def sample_data_dir() -> Path:
    return resource_dir("sample_data")


def stylesheet() -> Path:
    return resource_dir("styles") / "cachetui.tcss"
