"""Spack's own binary mirrors, read from its configuration files as Spack 1.2 reads them
(never by running `spack`: slow to start, and maybe not installed). From Spack's source:
- scopes, lowest first (config.py create_incremental, push_scope_incremental, include.yaml):
  defaults `$spack/etc/spack/defaults` (including `base`, then the platform's directory), then
  `$spack/etc/spack`, which includes system (`/etc/spack`, $SPACK_SYSTEM_CONFIG_PATH), site
  (`site/`) and user (`~/.spack`, $SPACK_USER_CONFIG_PATH) below itself; no system or user with
  $SPACK_DISABLE_LOCAL_CONFIG. Before 1.1 (no etc/spack/include.yaml): system, site
  `$spack/etc/spack`, user; before 1.0 (no defaults/include.yaml) each with its platform's
  subdirectory above it. Top: `$SPACK_ENV/spack.yaml` under `spack:` (environment.py).
- merge_yaml (schema/__init__.py): a higher scope's mirrors first, merged into a lower one's
  of the same name; `name::` replaces instead (spack_yaml.py): `mirrors::` drops lower scopes.
- mirrors/mirror.py: a URL, or `fetch` (a URL or {url}) over `url`; `binary: false` is
  source-only. A URL of a scheme Spack knows is kept as written, anything else is a path
  (util/path.py canonicalize_path: `$spack`, `$env`..., environment variables, `~`, relative
  to the file it is in) made a file:// URL. bin/spack: the root is `<root>/bin/spack`'s.
"""

from __future__ import annotations

import getpass
import os
import re
import sys
import tempfile
import urllib.parse
import urllib.request
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from cachetui.model import LoadProblem
from cachetui.textsafe import visible
from cachetui.urls import URL_SCHEMES

# mirrors/mirror.py supported_url_schemes: a mirror URL of these is kept as written.
SPACK_SCHEMES = ("file", "http", "https", "sftp", "ftp", "s3", "gs", "oci", "oci+http")
_MAX_FILE = 4 << 20  # a configuration file is a few KiB
_SPACK_VARIABLE = re.compile(r"(\$\w+\b|\$\{\w+\})")  # util/path.py substitute_config_variables
_ENV_VARIABLE = re.compile(r"\$(\w+|\{[^}]*\})", re.ASCII)  # os.path.expandvars
_WHEN = re.compile(r"""\s*(["'])(\w+)\1\s+(not\s+)?in\s+env\s*""")  # include.yaml's `when`


@dataclass(frozen=True)
class SpackMirror:
    name: str
    url: str  # where Spack fetches from it
    file: str  # the configuration file its URL is written in


@dataclass
class SpackMirrors:
    mirrors: list[SpackMirror] = field(default_factory=list)  # in Spack's order
    problems: list[LoadProblem] = field(default_factory=list)
    looked_in: list[str] = field(default_factory=list)  # every file read, lowest precedence first
    root: str | None = None  # the Spack instance, when one was found

    @property
    def urls(self) -> list[str]:
        return [m.url for m in self.mirrors]

    @property
    def files(self) -> list[str]:
        """The files the mirrors are written in, each once."""
        return list(dict.fromkeys(m.file for m in self.mirrors))


def spack_mirrors(environ: Mapping[str, str] | None = None) -> SpackMirrors:
    """The binary mirrors Spack is configured with, as `environ` (default: os.environ) has it."""
    return _Reader(os.environ if environ is None else environ).read()


def spack_root(environ: Mapping[str, str]) -> str | None:
    """The Spack instance the user runs: the `spack` on PATH, else $SPACK_ROOT."""
    roots = []
    for folder in environ.get("PATH", "").split(os.pathsep):
        spack = os.path.join(folder, "spack")
        if folder and os.path.isfile(spack) and os.access(spack, os.X_OK):
            roots.append(os.path.dirname(os.path.dirname(os.path.realpath(spack))))
            break
    if environ.get("SPACK_ROOT"):
        roots.append(os.path.abspath(os.path.expanduser(environ["SPACK_ROOT"])))
    return next((r for r in roots if os.path.isdir(os.path.join(r, "etc", "spack"))), None)


def _platform() -> str:
    """Spack's name for this platform (spack/platforms)."""
    if sys.platform.startswith("freebsd"):
        return "freebsd"
    return {"win32": "windows"}.get(sys.platform, sys.platform)


def _user() -> str | None:
    try:
        return getpass.getuser()
    except (OSError, KeyError):
        return None


def _key(mapping: dict, name: str) -> tuple[Any, bool] | None:
    """The value of `name` in a mapping read from YAML, and whether it was written `name::`."""
    if name + ":" in mapping:
        return mapping[name + ":"], True
    return (mapping[name], False) if name in mapping else None


def _bare(key: str) -> tuple[str, bool]:
    """A key read from YAML, and whether it was written `key::` (spack_yaml.py)."""
    override = key.endswith(":") and "@" not in key
    return (key[:-1] if override else key), override


def _merge(low: dict[str, Any], high: dict[Any, Any]) -> dict[str, Any]:
    """schema/__init__.py merge_yaml on mappings: `high`'s keys first, each merged into `low`'s
    value unless written `key::`."""
    merged: dict[str, Any] = {}
    for key, value in high.items():
        if not isinstance(key, str):
            continue
        name, override = _bare(key)
        if not override and isinstance(low.get(name), dict) and isinstance(value, dict):
            value = _merge(low[name], value)
        merged[name] = value
    return {**merged, **{k: v for k, v in low.items() if k not in merged}}


class _Written(str):
    """A URL, with the file it is written in (a relative path is relative to that file)."""

    file: str


def _written(value: Any, file: str) -> Any:
    if isinstance(value, str):
        text = _Written(value)
        text.file = file
        return text
    if isinstance(value, dict):
        return {
            k: _written(v, file) if isinstance(k, str) and _bare(k)[0] in ("url", "fetch") else v
            for k, v in value.items()
        }
    return value


class _Reader:
    def __init__(self, environ: Mapping[str, str]) -> None:
        self.environ = environ
        self.root = spack_root(environ)
        self.problems: list[LoadProblem] = []
        self.scopes: list[tuple[str, str | None]] = []  # (file, the key its sections are under)
        self._seen: set[str] = set()
        self._loaded: dict[str, dict | None] = {}
        env = os.path.abspath(environ.get("SPACK_ENV") or os.devnull)
        self.named_env = environ.get("SPACK_ENV")  # an environment's directory (cmd/__init__.py)
        self.env_dir = env if os.path.isfile(os.path.join(env, "spack.yaml")) else None

    def read(self) -> SpackMirrors:
        self._instance()
        self._environment()
        merged: dict[str, Any] = {}
        where: dict[str, str] = {}
        for file, key in self.scopes:
            found = self._section(file, key, "mirrors")
            if found is None:
                continue
            section, override = found
            if not isinstance(section, dict):
                self._problem(file, "'mirrors' is not a mapping of names to mirrors; not read")
                continue
            section = {k: _written(v, file) for k, v in section.items()}
            merged = _merge({} if override else merged, section)
            where.update({_bare(k)[0]: file for k in section if isinstance(k, str)})
        mirrors = [self._mirror(name, entry, where[name]) for name, entry in merged.items()]
        looked_in = list(dict.fromkeys(file for file, _ in self.scopes))
        found_mirrors = [m for m in mirrors if m is not None]
        return SpackMirrors(found_mirrors, self.problems, looked_in, self.root)

    # -- the scopes ----------------------------------------------------------------------

    def _instance(self) -> None:
        local = "SPACK_DISABLE_LOCAL_CONFIG" not in self.environ
        system = self.environ.get("SPACK_SYSTEM_CONFIG_PATH") or "/etc/spack"
        user = self.environ.get("SPACK_USER_CONFIG_PATH") or "~/.spack"
        platform_dirs = False
        if self.root is None:  # no Spack here: its system and user scopes may still say
            scopes = [system, user] if local else []
        else:
            etc = os.path.join(self.root, "etc", "spack")
            defaults = os.path.join(etc, "defaults")
            platform_dirs = not os.path.exists(os.path.join(defaults, "include.yaml"))
            self._directory(defaults, platform_dirs)
            if os.path.exists(os.path.join(etc, "include.yaml")):  # Spack 1.1 on
                scopes = [etc]
            else:
                scopes = ([system] if local else []) + [etc] + ([user] if local else [])
        for path in scopes:
            self._directory(self._path(path, os.getcwd()), platform_dirs)

    def _environment(self) -> None:
        if self.env_dir is not None:
            self._file(os.path.join(self.env_dir, "spack.yaml"), "spack")
        elif self.named_env:
            said = "$SPACK_ENV names no environment here (no spack.yaml)"
            self._problem(os.path.abspath(self.named_env), said)

    def _directory(self, path: str, platform_dirs: bool = False) -> None:
        if path not in self._seen:
            self._seen.add(path)
            self._includes(os.path.join(path, "include.yaml"), None, path)
            self.scopes.append((os.path.join(path, "mirrors.yaml"), None))
            if platform_dirs:
                self._directory(os.path.join(path, _platform()))

    def _file(self, path: str, key: str | None = None) -> None:
        if path not in self._seen:
            self._seen.add(path)
            self._includes(path, key, os.path.dirname(path))
            self.scopes.append((path, key))

    def _includes(self, file: str, key: str | None, base: str) -> None:
        """config.py ConfigScope.included_scopes: each read before the file, the last first."""
        found = self._section(file, key, "include")
        entries = found[0] if found else []
        if not isinstance(entries, list):
            self._problem(file, "'include' is not a list; not read", "warning")
            entries = []
        for entry in reversed(entries):
            path = self._included(entry if isinstance(entry, dict) else {"path": entry}, file)
            if path is not None and os.path.isdir(path):
                self._directory(path)
            elif path is not None and os.path.exists(path):
                self._file(path)
            elif path is not None and not (isinstance(entry, dict) and entry.get("optional")):
                self._problem(file, f"included path {visible(path)} does not exist", "warning")

    def _included(self, entry: dict, file: str) -> str | None:
        """config.py IncludePath: the path (or the variable that overrides it) if `when` holds."""
        path, variable, when = (
            entry.get("path"),
            entry.get("path_override_env_var"),
            entry.get("when"),
        )
        if isinstance(variable, str) and self.environ.get(variable):
            path = self.environ[variable]
        if when:
            match = _WHEN.fullmatch(str(when))
            if match is None:
                said = f"include condition {visible(repr(when))} not evaluated; that include"
                self._problem(file, said + " is not read", "warning")
                return None
            if (match.group(2) in self.environ) == bool(match.group(3)):
                return None
        if not isinstance(path, str) or not path or "://" in path and not path.startswith("file:"):
            self._problem(file, f"include {visible(str(entry))} is not read (only local paths are)")
            return None
        return self._path(path, os.path.dirname(file))

    # -- values --------------------------------------------------------------------------

    def _path(self, text: str, base: str) -> str:
        """util/path.py canonicalize_path: Spack's variables, environment variables and `~`;
        a relative path is relative to `base`."""
        text = _SPACK_VARIABLE.sub(self._variable, text)
        text = _ENV_VARIABLE.sub(
            lambda m: self.environ.get(m.group(1).strip("{}"), m.group(0)), text
        )
        if text == "~" or text.startswith("~/"):
            text = self.environ.get("HOME", os.path.expanduser("~")) + text[1:]
        text = os.path.expanduser(text)
        if text.lower().startswith("file:"):
            text = urllib.request.url2pathname(urllib.parse.urlsplit(text).path)
        return os.path.normpath(os.path.join(base, text))

    def _variable(self, match: re.Match[str]) -> str:
        name = match.group(0).strip("${}").lower()
        cache = self.environ.get("SPACK_USER_CACHE_PATH") or os.path.expanduser("~/.spack")
        values = {"spack": self.root, "env": self.env_dir, "platform": _platform()}
        values.update(tempdir=tempfile.gettempdir(), user_cache_path=cache, user=_user())
        return values.get(name) or match.group(0)

    def _mirror(self, name: str, entry: Any, file: str) -> SpackMirror | None:
        """mirrors/mirror.py Mirror.binary and fetch_url; None for a source-only mirror."""
        url = entry
        if isinstance(entry, dict):
            if not (_key(entry, "binary") or (True, False))[0]:
                return None
            url = (_key(entry, "url") or (None, False))[0]
            fetch = (_key(entry, "fetch") or (None, False))[0]
            fetch = (_key(fetch, "url") or (None, False))[0] if isinstance(fetch, dict) else fetch
            url = fetch or url
        if not isinstance(url, _Written) or not url:
            self._problem(file, f"mirror {visible(name)!r} has no URL; skipped")
            return None
        written, scheme = url.file, urllib.parse.urlsplit(url).scheme.lower()
        if scheme not in SPACK_SCHEMES:  # a path
            return SpackMirror(
                name, Path(self._path(url, os.path.dirname(written))).as_uri(), written
            )
        if scheme not in URL_SCHEMES:
            said = f"mirror {visible(name)!r}: cachetui cannot read {scheme}:// mirrors; skipped"
            self._problem(written, said, "warning")
            return None
        return SpackMirror(name, str(url), written)

    # -- files ---------------------------------------------------------------------------

    def _section(self, file: str, key: str | None, name: str) -> tuple[Any, bool] | None:
        data = self._load(file)
        if data is not None and key is not None:
            inside = (_key(data, key) or (None, False))[0]
            data = inside if isinstance(inside, dict) else None
        return _key(data, name) if data is not None else None

    def _load(self, file: str) -> dict | None:
        if file not in self._loaded:
            self._loaded[file] = self._parse(file)
        return self._loaded[file]

    def _parse(self, file: str) -> dict | None:
        import yaml

        try:
            with open(file, "rb") as stream:
                data = stream.read(_MAX_FILE + 1)
        except (FileNotFoundError, NotADirectoryError):
            return None
        except OSError as error:
            self._problem(file, f"cannot read: {visible(error.strerror or str(error))}")
            return None
        if len(data) > _MAX_FILE:
            self._problem(file, f"larger than {_MAX_FILE >> 20} MiB: not a Spack configuration")
            return None
        loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
        try:
            parsed = yaml.load(data.decode("utf-8-sig"), Loader=loader)
        except (yaml.YAMLError, UnicodeDecodeError, RecursionError, ValueError) as error:
            mark, problem = getattr(error, "problem_mark", None), getattr(error, "problem", None)
            said = f"line {mark.line + 1}, column {mark.column + 1}: {problem}" if mark else error
            self._problem(file, f"not valid YAML ({visible(str(said))}); its mirrors are not read")
            return None
        if parsed is not None and not isinstance(parsed, dict):
            self._problem(file, "not a YAML mapping; not read")
            return None
        return parsed

    def _problem(self, file: str, message: str, severity: str = "error") -> None:
        self.problems.append(LoadProblem(file, message, severity))
