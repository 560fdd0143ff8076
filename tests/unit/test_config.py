"""The config file, $PAGER and the remembered theme: values, origins and every warning."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from cachetui.config import (
    COLORS,
    Config,
    ConfigProblem,
    default_config_path,
    default_state_path,
    describe,
    load_config,
    remember_theme,
)

BINDINGS = ("copy-hash", "toggle-filters", "quit", "help", "go-to-hash")

FULL = """\
sources = ["~/spack-cache/develop", "https://binaries.spack.io/develop/"]
theme = "textual-dark"
color = "truecolor"
mouse = false
pager = "less -R"

[keymap]
copy-hash = "c"
toggle-filters = "f2,ctrl+b"
"""


@pytest.fixture(autouse=True)
def no_pager(monkeypatch) -> None:
    """The developer's own $PAGER must not leak into the expectations."""
    monkeypatch.delenv("PAGER", raising=False)


@pytest.fixture
def home(tmp_path: Path, monkeypatch) -> Path:
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("USERPROFILE", str(home))  # what expanduser reads on Windows
    return home


def write(tmp_path: Path, text: str | bytes, name: str = "config.toml") -> Path:
    path = tmp_path / name
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text, encoding="utf-8")
    return path


def load(path: Path, **kwargs) -> Config:
    """Load without a remembered theme unless a test asks for one."""
    kwargs.setdefault("state_path", None)
    kwargs.setdefault("binding_ids", BINDINGS)
    return load_config(path, **kwargs)


def messages(config: Config) -> list[str]:
    return [p.message for p in config.problems]


# -- Good files -----------------------------------------------------------------------------


def test_a_full_file_gives_every_value_and_where_it_came_from(tmp_path: Path, home: Path) -> None:
    path = write(tmp_path, FULL)
    config = load(path)
    assert config.problems == []
    assert config.sources == [
        str(home / "spack-cache" / "develop"),
        "https://binaries.spack.io/develop/",
    ]
    assert (config.theme, config.color, config.mouse, config.pager) == (
        "textual-dark",
        "truecolor",
        False,
        "less -R",
    )
    assert config.keymap == {"copy-hash": "c", "toggle-filters": "f2,ctrl+b"}
    assert config.path == path
    for key in (
        "sources",
        "theme",
        "color",
        "mouse",
        "pager",
        "keymap.copy-hash",
        "keymap.toggle-filters",
    ):
        assert config.origin(key) == str(path), key


def test_an_empty_file_gives_the_defaults(tmp_path: Path) -> None:
    config = load(write(tmp_path, ""))
    assert config.problems == []
    assert (
        config.sources,
        config.theme,
        config.color,
        config.mouse,
        config.pager,
        config.keymap,
    ) == ([], None, "auto", True, None, {})
    assert all(
        config.origin(key) == "default" for key in ("sources", "theme", "color", "mouse", "pager")
    )


def test_describe_shows_each_value_as_toml_with_its_origin(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("PAGER", "most")
    path = write(
        tmp_path,
        'theme = "nord"\nsources = "https://x.example/c/"\nenv = "envs/mine"\n'
        '[keymap]\ncopy-hash = "y"\n',
    )
    rows = describe(load(path))
    assert rows == [
        ("sources", '["https://x.example/c/"]', str(path)),
        ("env", f'"{path.parent / "envs" / "mine"}"', str(path)),  # beside the file
        ("theme", '"nord"', str(path)),
        ("color", '"auto"', "default"),
        ("mouse", "true", "default"),
        ("pager", '"most"', "$PAGER"),
        ("keymap.copy-hash", '"y"', str(path)),
    ]


def test_kind_spellings_are_accepted(tmp_path: Path) -> None:
    """A BOM, `color = 256` without quotes, "TrueColor", and spaces after keymap commas."""
    config = load(
        write(tmp_path, '\ufeffcolor = 256\n[keymap]\ntoggle-filters = "f2, ctrl+b"\nhelp = "?"\n')
    )
    assert config.problems == []
    assert (config.color, config.keymap) == ("256", {"toggle-filters": "f2,ctrl+b", "help": "?"})
    assert load(write(tmp_path, 'color = "TrueColor"')).color == "truecolor"


@pytest.mark.parametrize("color", COLORS)
def test_every_color_mode_is_accepted(tmp_path: Path, color: str) -> None:
    config = load(write(tmp_path, f'color = "{color}"'))
    assert (config.color, config.problems) == (color, [])


def test_sources_expand_home_but_leave_urls_alone(tmp_path: Path, home: Path) -> None:
    path = write(
        tmp_path, 'sources = ["~/a", "~", "/abs/~x", "s3://bucket/~me/", "file:///~/c", "rel/dir"]'
    )
    # A relative path means beside the config file, wherever cachetui is run from.
    assert load(path).sources == [
        str(home / "a"),
        str(home),
        "/abs/~x",
        "s3://bucket/~me/",
        "file:///~/c",
        str(path.parent / "rel/dir"),
    ]


# -- Bad values ----------------------------------------------------------------------------

GOOD_TOP = 'theme = "nord"\n'
GOOD_KEYMAP = 'quit = "ctrl+x"\n'


@pytest.mark.parametrize(
    "top, keymap, key, fragment",
    [
        ('mouse = "yes"', "", "'mouse'", 'must be true or false, not "yes"'),
        ('color = "blue"', "", "'color'", 'must be one of auto, 256, truecolor, none, not "blue"'),
        ("color = 16", "", "'color'", "not 16"),
        ("pager = ''", "", "'pager'", 'non-empty string (a shell command), not ""'),
        ("pager = ['less']", "", "'pager'", 'not ["less"]'),
        ("sources = 3", "", "'sources'", "must be a list of strings, not 3"),
        ("sources = {a = 1}", "", "'sources'", "not {a = 1}"),
        ('keymap = "c"', None, "'keymap'", 'must be a table of binding id = keys, not "c"'),
        ('colour = "none"', "", "'colour'", "unknown key 'colour' (did you mean 'color'?)"),
        ("zzz = 1", "", "'zzz'", "unknown key 'zzz'"),
        ("", "copy-hash = 3", "'copy-hash'", "must be a non-empty string of keys, not 3"),
        ("", 'copy-hash = ""', "'copy-hash'", "must be a non-empty string of keys"),
        ("", 'copy-hash = "c h"', "'copy-hash'", "bad keys for 'copy-hash': \"c h\""),
        ("", 'copy-hash = "ctrl+"', "'copy-hash'", "bad keys for 'copy-hash': \"ctrl+\""),
        ("", 'copy-hash = "f2,,y"', "'copy-hash'", "bad keys"),
        # Names Textual does not have: they would take the key away and give one that never fires.
        ("", 'copy-hash = "ctrl-x"', "'copy-hash'", "bad keys for 'copy-hash': \"ctrl-x\""),
        ("", 'copy-hash = "Ctrl+b"', "'copy-hash'", "bad keys"),
        ("", 'copy-hash = "foo"', "'copy-hash'", "bad keys"),
        ("", 'copy-hash = "[/]"', "'copy-hash'", "bad keys"),
        ("", 'copy-hash = "ctrl+question_marks"', "'copy-hash'", "bad keys"),
        ("", "copy-hash = {key = 'c'}", "'copy-hash'", 'not {key = "c"}'),
        (
            "",
            'copy-hsh = "c"',
            "'copy-hsh'",
            "keymap: unknown binding id 'copy-hsh' (did you mean 'copy-hash'?)",
        ),
    ],
)
def test_each_bad_value_is_a_warning_naming_file_and_key_while_good_values_apply(
    tmp_path: Path, top: str, keymap: str | None, key: str, fragment: str
) -> None:
    text = (
        GOOD_TOP + top + "\n" + (f"[keymap]\n{GOOD_KEYMAP}{keymap}\n" if keymap is not None else "")
    )
    path = write(tmp_path, text)
    config = load(path)
    assert len(config.problems) == 1, messages(config)
    problem = config.problems[0]
    assert problem.source == str(path) and problem.severity == "warning"
    assert key in problem.message and fragment in problem.message
    assert config.theme == "nord" and config.origin("theme") == str(path)
    if keymap is not None:
        assert (
            config.keymap["quit"] == "ctrl+x"
            and "copy-hash" not in config.keymap
            and "copy-hsh" not in config.keymap
        )


def test_a_bad_value_leaves_that_setting_at_its_default(tmp_path: Path) -> None:
    config = load(write(tmp_path, 'mouse = "no"\ncolor = "blue"\nsources = false\n'))
    assert (config.mouse, config.color, config.sources) == (True, "auto", [])
    assert [config.origin(k) for k in ("mouse", "color", "sources")] == ["default"] * 3
    assert len(config.problems) == 3


def test_bad_sources_items_are_skipped_one_by_one(tmp_path: Path) -> None:
    config = load(write(tmp_path, 'sources = ["https://a.example/", 3, "", "https://b.example/"]'))
    assert config.sources == ["https://a.example/", "https://b.example/"]
    assert messages(config) == [
        "key 'sources': item 2 must be a non-empty string, not 3; skipped",
        "key 'sources': item 3 must be a non-empty string, not \"\"; skipped",
    ]


@pytest.mark.parametrize(
    "keys",
    [
        "y",
        "Y",
        "?",
        "+",
        "f2",
        "f24",
        "ctrl+b",
        "shift+tab",
        "alt+enter",
        "ctrl+shift+up",
        "question_mark",
        "full_stop",
        "hyphen_minus",
        "pagedown",
        "space,escape",
    ],
)
def test_key_names_textual_has_are_taken(tmp_path: Path, keys: str) -> None:
    config = load(write(tmp_path, f'[keymap]\ncopy-hash = "{keys}"\n'))
    assert config.keymap == {"copy-hash": keys} and not config.problems


def test_keymap_ids_are_only_checked_when_the_app_says_which_exist(tmp_path: Path) -> None:
    path = write(tmp_path, '[keymap]\nmade-up = "m"\n')
    assert load(path, binding_ids=None).keymap == {"made-up": "m"}
    assert load(path).keymap == {}


def test_a_top_level_key_after_the_keymap_header_is_explained(tmp_path: Path) -> None:
    config = load(write(tmp_path, '[keymap]\ncopy-hash = "c"\ntheme = "nord"\n'))
    assert config.theme is None and config.keymap == {"copy-hash": "c"}
    assert messages(config) == [
        "keymap: unknown binding id 'theme' (top-level keys such as 'theme' go before the "
        "[keymap] table)"
    ]


def test_escapes_in_bad_values_keys_and_ids_are_shown_escaped(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        'mouse = "\\u001b[31myes\\u202e"\n"\\u001b]52;c;x\\u0007" = 1\n'
        '[keymap]\n"\\u001b[2J" = "c"\nquit = "\\u009b1m"\n',
    )
    config = load(path)
    assert len(config.problems) == 4
    for message in messages(config):
        assert not any(ch in message for ch in "\x1b\x07\x9b\u202e"), message
    joined = "\n".join(messages(config))
    assert (
        "\\x1b[31myes\\u202e" in joined and "\\x1b]52;c;x\\x07" in joined and "\\x1b[2J" in joined
    )
    assert "\\x9b1m" in joined


def test_describe_escapes_what_it_shows(tmp_path: Path) -> None:
    config = load(
        write(tmp_path, 'theme = "a\\u001bb"\n[keymap]\n"x\\u0085y" = "c"\n'), binding_ids=None
    )
    for row in describe(config):
        assert all(cell.isprintable() for cell in row), row


def test_long_bad_values_are_shortened(tmp_path: Path) -> None:
    config = load(write(tmp_path, f'mouse = "{"y" * 5000}"\n{"k" * 5000} = 1\n'))
    assert len(config.problems) == 2
    assert all(len(m) < 200 for m in messages(config)), messages(config)
    assert "…" in messages(config)[0]


# -- The file itself -----------------------------------------------------------------------


def test_invalid_toml_names_the_file_and_the_line(tmp_path: Path) -> None:
    path = write(tmp_path, 'theme = "nord"\ncolor = auto\n')
    config = load(path)
    assert len(config.problems) == 1
    assert config.problems[0].source == str(path)
    assert "not valid TOML" in config.problems[0].message and "line 2" in config.problems[0].message
    assert config.theme is None  # nothing from a file that does not parse


def test_a_file_that_is_not_utf8_is_a_warning(tmp_path: Path) -> None:
    path = write(tmp_path, 'theme = "caf\xe9"\n'.encode("latin-1"))
    config = load(path)
    assert [(p.source, p.message) for p in config.problems] == [
        (str(path), "not UTF-8 text: byte 0xe9 at line 1")
    ]
    assert config.theme is None


def test_a_missing_default_file_is_silent(tmp_path: Path) -> None:
    assert not default_config_path().exists()
    config = load_config(state_path=None)
    assert config.problems == [] and config.path == default_config_path()


def test_the_default_file_is_read_when_present() -> None:
    default_config_path().parent.mkdir(parents=True, exist_ok=True)
    default_config_path().write_text('theme = "nord"\n', encoding="utf-8")
    config = load_config(state_path=None)
    assert (config.theme, config.origin("theme")) == ("nord", str(default_config_path()))


def test_a_missing_or_unreadable_named_file_is_a_warning(tmp_path: Path) -> None:
    missing = tmp_path / "nope.toml"
    config = load(missing)
    assert [(p.source, p.message) for p in config.problems] == [
        (str(missing), "cannot read: No such file or directory")
    ]
    assert config.theme is None and config.path == missing
    directory = load(tmp_path)
    assert len(directory.problems) == 1 and directory.problems[0].source == str(tmp_path)
    assert directory.problems[0].message.startswith("cannot read: ")


def test_a_named_file_starting_with_tilde_is_looked_up_in_home(home: Path) -> None:
    (home / "my.toml").write_text('color = "none"')
    assert load("~/my.toml").color == "none"


def test_a_huge_file_is_refused_without_reading_it_all(tmp_path: Path) -> None:
    path = write(tmp_path, "# " + "x" * (2 << 20))
    config = load(path)
    assert len(config.problems) == 1 and "larger than" in config.problems[0].message


# -- $PAGER --------------------------------------------------------------------------------


def test_pager_comes_from_the_environment_when_the_file_sets_none(
    tmp_path: Path, monkeypatch
) -> None:
    path = write(tmp_path, 'theme = "nord"')
    assert (load(path).pager, load(path).origin("pager")) == (None, "default")
    monkeypatch.setenv("PAGER", "most -s")
    assert (load(path).pager, load(path).origin("pager")) == ("most -s", "$PAGER")
    monkeypatch.setenv("PAGER", "  ")
    assert load(path).pager is None


def test_the_config_pager_beats_the_environment(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("PAGER", "most")
    path = write(tmp_path, 'pager = "less -R"')
    assert (load(path).pager, load(path).origin("pager")) == ("less -R", str(path))


def test_a_bad_config_pager_falls_back_to_the_environment(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("PAGER", "most")
    config = load(write(tmp_path, "pager = 3"))
    assert (config.pager, config.origin("pager"), len(config.problems)) == ("most", "$PAGER", 1)


# -- The remembered theme ------------------------------------------------------------------


def test_a_remembered_theme_comes_back_and_beats_the_config_file(tmp_path: Path) -> None:
    path = write(tmp_path, 'theme = "nord"')
    state = tmp_path / "state" / "deep" / "state.json"
    assert load(path, state_path=state).theme == "nord"
    assert remember_theme(load(path, state_path=state), "gruvbox") is True
    config = load(path, state_path=state)
    assert (config.theme, config.origin("theme")) == ("gruvbox", f"remembered ({state})")
    assert config.problems == []
    assert ("theme", '"gruvbox"', f"remembered ({state})") in describe(config)


def test_the_default_state_file_is_used_unless_told_otherwise(tmp_path: Path) -> None:
    config = load_config()
    assert config.state_path == default_state_path()
    assert remember_theme(config, "dracula") and default_state_path().is_file()
    assert load_config().theme == "dracula"
    assert load_config(state_path=None).theme is None


def test_without_a_state_path_nothing_is_remembered(tmp_path: Path) -> None:
    config = load_config(state_path=None)
    assert remember_theme(config, "nord") is False
    assert not default_state_path().exists()


@pytest.mark.parametrize(
    "content",
    [
        b"{not json",
        b"\xff\xfe",
        b'["theme"]',
        b'{"theme": 3}',
        b'{"theme": ""}',
        b"[" * 100_000,
        b" " * 100_000,
        b"",
    ],
)
def test_a_damaged_state_file_is_ignored_then_rewritten(tmp_path: Path, content: bytes) -> None:
    state = tmp_path / "state.json"
    state.write_bytes(content)
    config = load(write(tmp_path, 'theme = "nord"'), state_path=state)
    assert (config.theme, config.problems) == ("nord", [])
    assert remember_theme(config, "monokai") is True
    assert json.loads(state.read_text()) == {"theme": "monokai"}


def test_remembering_keeps_the_other_keys_of_the_state_file(tmp_path: Path) -> None:
    state = tmp_path / "state.json"
    state.write_text(json.dumps({"theme": "old", "later": [1, 2]}))
    assert remember_theme(load(write(tmp_path, ""), state_path=state), "new")
    assert json.loads(state.read_text()) == {"theme": "new", "later": [1, 2]}
    assert not list(tmp_path.glob(".state.json.*"))  # no temp file left behind


def test_an_unwritable_state_directory_is_not_an_error(tmp_path: Path) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("")  # a file where the directory should be: fails even for root
    config = load(write(tmp_path, ""), state_path=blocker / "cachetui" / "state.json")
    assert remember_theme(config, "nord") is False
    assert config.state_path is not None and config.state_path.parent.parent == blocker
    readonly_state = tmp_path / "as-dir"
    readonly_state.mkdir()  # the state path itself is a directory: os.replace fails
    assert remember_theme(load(write(tmp_path, ""), state_path=readonly_state), "nord") is False
    assert list(tmp_path.glob(".as-dir.*")) == []  # the temp file was cleaned up


# -- Never raises ---------------------------------------------------------------------------


HOSTILE = [
    b"a = " + b"[" * 50_000,
    b"a = " + b"{b = " * 50_000,
    b"[" + b".".join([b"k"] * 20_000) + b"]\n",
    b"[keymap." + b".".join([b"k"] * 5_000) + b"]\n",
    b"keymap = " + b"[" * 2_000 + b"]" * 2_000,
    b"sources = " + b"[" * 500 + b"]" * 500,
    b'theme = "' + b"x" * 900_000 + b'"',
    b"[keymap]\n" + b"".join(b'k%d = "%d"\n' % (i, i) for i in range(20_000)),
    b"color = " + b"9" * 5_000,
    b"mouse = 1979-05-27T07:32:00Z\ncolor = nan\npager = inf\ntheme = 07:32:00\n",
    b"\x00\x01\x02",
    b"\x1b[2J\x1b]52;c;aGk=\x07",
]


@pytest.mark.parametrize("content", HOSTILE, ids=range(len(HOSTILE)))
def test_hostile_files_give_warnings_not_exceptions(tmp_path: Path, content: bytes) -> None:
    config = load(write(tmp_path, content))
    assert all(isinstance(p, ConfigProblem) and len(p.message) < 400 for p in config.problems)
    assert all(m.isprintable() for m in messages(config))
    describe(config)


def test_random_bytes_and_mutated_files_never_raise(tmp_path: Path) -> None:
    rng = random.Random(20240611)
    seed = FULL.encode() + b'\n"\\u001b" = [1, 2.5, true, {a = [{}]}]\n'
    path = tmp_path / "config.toml"
    for _ in range(400):
        if rng.random() < 0.3:
            data = bytes(rng.randrange(256) for _ in range(rng.randrange(200)))
        else:
            data = bytearray(seed)
            for _ in range(rng.randrange(1, 8)):
                at = rng.randrange(len(data))
                data[at : at + rng.randrange(4)] = bytes(
                    rng.choice(b"[]{}=\"',.\n \\#x0\x1b\xff") for _ in range(rng.randrange(3))
                )
        path.write_bytes(bytes(data))
        config = load(path)
        assert all(m.isprintable() for m in messages(config))
        describe(config)


def test_a_flood_of_bad_entries_is_summed_up(tmp_path: Path) -> None:
    keymap = "".join(f'k{i} = "{i}"\n' for i in range(500))
    config = load(write(tmp_path, f'theme = "nord"\n[keymap]\ncopy-hash = "c"\n{keymap}'))
    assert len(config.problems) == 20
    assert messages(config)[0] == "keymap: unknown binding id 'k0'"
    assert messages(config)[-1] == "and 481 more problems"
    assert (config.theme, config.keymap) == ("nord", {"copy-hash": "c"})
