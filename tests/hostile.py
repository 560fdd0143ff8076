"""The hostile corpus: data that tries to style, link, click, drive the terminal or break
the layout, written as summaries, a Spack database and a tag map (write_hostile_sources),
with what the user must see of each value (SHOWN, escaped, shown). Read by
unit/test_hostile_cli.py (the command line) and ui/test_hostile_app.py (the app)."""

from __future__ import annotations

import json
import re
from pathlib import Path

from helpers import fake_hash

# -- the hostile classes ----------------------------------------------------------------------

# Each is wrapped in letters so that no reader's strip() can shorten it.
HOSTILE: dict[str, str] = {
    "bold": "[bold red]x[/]",
    "link": "[link=https://evil.example]x[/link]",
    "click": "[@click=app.quit]x[/]",
    "osc52": "c\x1b]52;c;ZXZpbA==\x07d",  # writes "evil" to the clipboard
    "clear": "c\x1b[2Jd",  # clears the screen
    "osc8": "c\x1b]8;;https://evil.example\x1b\\x\x1b]8;;\x1b\\d",  # a hyperlink
    "c0": "c\x07b\x08s\rd\x00e",  # bell, backspace, carriage return, NUL
    "c1": "c\x9b2J\x9d0;t\x9c\x85d",  # CSI and OSC as C1 controls, ST, NEL
    "bidi": "c\u202eevil\u202cd\u2066i\u2069",  # right-to-left override, isolates
    "long": "L" * 10_000,
    "flood": ("[b]\x1b[2J\u202e" * 1_250)[:10_000],  # 10,000 characters, most of them unsafe
}
MARKUP = ("[bold red]x[/]", "[link=https://evil.example]x[/link]", "[@click=app.quit]x[/]")

# What must never reach the terminal raw: C0 controls, DEL, C1 controls, bidi marks.
UNSAFE = re.compile("[\x00-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")


def dir_name(key: str, value: str) -> str:
    """A file-system-safe but still hostile directory name (no '/' or NUL, at most 100
    characters)."""
    return f"{key}-{value.replace('/', '|').replace(chr(0), '0')[:100]}"


# -- the data files ---------------------------------------------------------------------------


def _summary(
    path: Path, title: str, records: list[dict], tag: str, meta: dict | None = None
) -> Path:
    """A cache.spack.io summary; `categories` as a JSON list, since a tag may hold brackets."""
    path.parent.mkdir(parents=True, exist_ok=True)
    lines = [
        "---",
        "title: " + json.dumps(title),
        "layout: cache",
        "categories: " + json.dumps(["package", tag]),
    ]
    if meta is not None:
        lines.append("meta: " + json.dumps(meta))
    lines += ["spec_details: " + json.dumps(records), "---", ""]
    path.write_text("\n".join(lines), encoding="utf-8")
    return path


# A broken summary's directory: its problems name it (markup first: a toast parsing it would show).
BAD_DIR = dir_name("bad", HOSTILE["bold"] + HOSTILE["clear"] + HOSTILE["bidi"])
EXTERNAL = f"ext-{HOSTILE['click']}{HOSTILE['osc52']}"
COMPILER = f"cc-{HOSTILE['bold']}{HOSTILE['clear']}"
COMPILER_VERSION = f"9{HOSTILE['bidi']}"
EXTERNAL_PATH = f"/usr/{HOSTILE['osc8']}{HOSTILE['link']}{HOSTILE['c1']}"
GONE = f"gone-{HOSTILE['c1']}{HOSTILE['link']}"
VIRTUALS = ("bold", "clear", "bidi")  # the classes whose database edge names a hostile virtual
DATABASE_TAGS = ("click", "osc52", "bidi", "long")  # the tag map loads the database under each
ROOT = "d-root"


def summary_hash(n: int) -> str:
    return fake_hash(n, "hs")


def database_hash(n: int) -> str:
    return fake_hash(n, "hd")


def write_hostile_sources(root: Path) -> list[str]:
    """Hostile summaries, a hostile Spack database and a tag map labelling it; the SOURCE list."""
    summaries = root / "summaries"
    for n, (key, value) in enumerate(HOSTILE.items()):
        _summary(
            summaries / dir_name(key, value) / "specs.md",
            f"p-{key}-{value}",
            [
                {
                    "hash": summary_hash(n),
                    "versions": [f"1.{value}"],
                    "compiler": f"gcc@{value}",
                    "os": f"os{value}",
                    "platform": "linux",
                    "target": f"t{value}",
                    "stacks": ["root", f"s{value}"],
                    "variants": [f"+v{value}", f"k={value}"],
                    "size": 1024,
                    "tarball": f"https://binaries.example/{value}.spack",
                }
            ],
            tag=f"tag-{value}",
        )
    # A broken summary whose problems carry hostile text: its title, its file name, and the
    # values its meta claims (named in the problem message); one record without a hash.
    bad_title = "bad " + " ".join(HOSTILE[k] for k in HOSTILE if k not in ("long", "flood"))
    _summary(
        summaries / BAD_DIR / "specs.md",
        bad_title,
        [
            {
                "versions": ["1.0"],
                "os": "x",
                "platform": "linux",
                "target": "x",
            },  # no hash: skipped
            {
                "hash": summary_hash(99),
                "versions": ["1.0"],
                "compiler": "gcc@13",
                "os": "x",
                "platform": "linux",
                "target": "x",
            },
        ],
        tag="develop",
        meta={"versions": [HOSTILE["clear"] + HOSTILE["bold"], HOSTILE["osc52"] + HOSTILE["bidi"]]},
    )

    # The database: a root that links every hostile package, builds with a hostile compiler
    # (a `c` edge) and a hostile external; each hostile package is used by the root.
    installs: dict[str, dict] = {}

    def add(
        digest: str,
        name: str,
        version: str,
        arch: tuple[str, str, str],
        parameters: dict,
        dependencies: list,
        **extra,
    ) -> None:
        installs[digest] = {
            "spec": {
                "name": name,
                "version": version,
                "arch": {"platform": arch[0], "platform_os": arch[1], "target": arch[2]},
                "parameters": parameters,
                "dependencies": [
                    {"name": n, "hash": h, "parameters": {"deptypes": t, "virtuals": v}}
                    for n, h, t, v in dependencies
                ],
                "hash": digest,
                **extra,
            },
            "ref_count": 0,
            "in_buildcache": extra.get("external") is None,
        }

    edges = []
    for n, (key, value) in enumerate(HOSTILE.items()):
        add(
            database_hash(n),
            f"d-{key}-{value}",
            f"2.{value}",
            ("linux", f"os{value}", f"t{value}"),
            {f"v{value}": True, "k": value, "cflags": [f"-O2 {value}"]},
            [],
        )
        edges.append(
            (
                f"d-{key}-{value}",
                database_hash(n),
                ["link"],
                [f"virt-{value}"] if key in VIRTUALS else [],
            )
        )
    compiler, external = database_hash(90), database_hash(91)
    add(compiler, COMPILER, COMPILER_VERSION, ("linux", "ubuntu22.04", "x86_64"), {}, [])
    add(
        external,
        EXTERNAL,
        "1.0",
        ("linux", "ubuntu22.04", "x86_64"),
        {},
        [],
        external={"path": EXTERNAL_PATH, "module": None},
    )
    edges += [
        (COMPILER, compiler, ["build"], ["c"]),
        (EXTERNAL, external, ["build"], []),
        (GONE, database_hash(92), ["run"], []),
    ]  # no record holds it
    add(database_hash(80), ROOT, "1.0", ("linux", "ubuntu22.04", "x86_64"), {}, edges)
    db = root / "db" / "index.json"
    db.parent.mkdir(parents=True, exist_ok=True)
    db.write_text(
        json.dumps({"database": {"version": "8", "installs": installs}}), encoding="utf-8"
    )

    # A tag map: the database's specs in hostile tags and stacks.
    tags = {
        f"dtag-{HOSTILE[k]}": [{"label": f"dstack-{HOSTILE[k]}", "url": "db/index.json"}]
        for k in DATABASE_TAGS
    }
    (root / "tags.json").write_text(json.dumps(tags), encoding="utf-8")
    return [str(summaries), str(root / "tags.json")]


# -- what the user must see ---------------------------------------------------------------------

# Each class as it must be shown: markup literally, everything unsafe as a visible escape.
# Written out by hand, so that a broken `visible` cannot agree with itself.
SHOWN: dict[str, str] = {
    "bold": "[bold red]x[/]",
    "link": "[link=https://evil.example]x[/link]",
    "click": "[@click=app.quit]x[/]",
    "osc52": r"c\x1b]52;c;ZXZpbA==\x07d",
    "clear": r"c\x1b[2Jd",
    "osc8": r"c\x1b]8;;https://evil.example\x1b\x\x1b]8;;\x1b\d",
    "c0": r"c\x07b\x08s\x0dd\x00e",
    "c1": r"c\x9b2J\x9d0;t\x9c\x85d",
    "bidi": r"c\u202eevil\u202cd\u2066i\u2069",
    "long": "L" * 10_000,
    "flood": r"[b]\x1b[2J\u202e" * 1_250,
}


def escaped(text: str) -> str:
    """`text` as the user must see it, worked out apart from cachetui.textsafe."""
    return "".join(
        f"\\x{ord(c):02x}"
        if ord(c) < 0x20 or 0x7F <= ord(c) <= 0x9F
        else f"\\u{ord(c):04x}"
        if c in "\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069"
        else c
        for c in text
    )


def shown(text: str) -> str:
    """`text` with each hostile value replaced by its shown form (longest first)."""
    for key in sorted(HOSTILE, key=lambda k: -len(HOSTILE[k])):
        text = text.replace(HOSTILE[key], SHOWN[key])
    return text
