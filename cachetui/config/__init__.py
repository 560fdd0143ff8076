"""The user's settings: a TOML config file, $PAGER, and the theme last picked in the app.

Everything in the config file is optional and nothing in it can stop cachetui from
starting: each bad value becomes a `ConfigProblem` (a warning) and its default is used,
while the good values in the same file still apply. `origins` records where each value
came from, so `cachetui config` can answer "why is it like this?".

No Textual import here: the fast CLI sub-commands read the config too.

settings.py     the settings, their allowed values and origins (Config, ConfigProblem)
loading.py      reading the TOML file, $PAGER and the state file into a Config
checks.py       each top-level key's check; keymap.py the [keymap] table's
state.py        the state file: the theme remembered from the app
sources.py      which sources are read and where they came from (`spack`: Spack's mirrors)
description.py  every setting as TOML with its origin, for `cachetui config`
toml_text.py    values written back as TOML, and echoed safely in warnings
"""

from cachetui.config.description import describe
from cachetui.config.keymap import check_keymap
from cachetui.config.loading import default_config_path, load_config
from cachetui.config.settings import (
    COLORS,
    DEFAULT_THEME,
    KEYS,
    ORIGIN_COMMAND_LINE,
    ORIGIN_DEFAULT,
    ORIGIN_PAGER_ENV,
    ChosenSources,
    Config,
    ConfigProblem,
)
from cachetui.config.sources import ORIGIN_SAMPLE, SPACK_SOURCE, settle_sources
from cachetui.config.state import default_state_path, remember_theme

__all__ = [
    "COLORS",
    "DEFAULT_THEME",
    "KEYS",
    "ORIGIN_COMMAND_LINE",
    "ORIGIN_DEFAULT",
    "ORIGIN_PAGER_ENV",
    "ORIGIN_SAMPLE",
    "SPACK_SOURCE",
    "ChosenSources",
    "Config",
    "ConfigProblem",
    "check_keymap",
    "default_config_path",
    "default_state_path",
    "describe",
    "load_config",
    "remember_theme",
    "settle_sources",
]
