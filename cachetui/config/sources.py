"""Which sources are read, and where they came from: the command line's, else the config
file's, else Spack's own binary mirrors, else the bundled sample data. A source written
exactly `spack` stands for Spack's binary mirrors (a directory named spack is `./spack`).

Spack's configuration is read only when it is needed, and its reader imported only then: the
app settles its sources in its load worker, not before its first frame."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from cachetui.config.settings import ORIGIN_COMMAND_LINE, ChosenSources, Config
from cachetui.model import LoadProblem

if TYPE_CHECKING:
    from cachetui.sources.spack_config import SpackMirrors

SPACK_SOURCE = "spack"
ORIGIN_SAMPLE = "default (the bundled sample data)"
# What the status line says when cachetui chose the sources itself (none given anywhere).
FROM_SPACK, FROM_SAMPLE = "Spack's mirrors", "the sample data"
CHOSEN_BY_DEFAULT = (FROM_SPACK, FROM_SAMPLE)


def settle_sources(
    config: Config, command_line: Sequence[str] = (), environ: Mapping[str, str] | None = None
) -> ChosenSources:
    """The sources to read and where they came from; kept as `config.chosen` too."""
    if command_line:
        chosen = _expanded(list(command_line), ORIGIN_COMMAND_LINE, "the command line", environ)
    elif config.sources:
        chosen = _expanded(config.sources, config.origin("sources"), "the config file", environ)
    else:
        found = _spack_mirrors(environ)
        if found.mirrors:
            chosen = ChosenSources(found.urls, spack_origin(found), FROM_SPACK, found.problems)
        else:
            chosen = ChosenSources([], ORIGIN_SAMPLE, FROM_SAMPLE, found.problems, True)
    config.chosen = chosen
    return chosen


def spack_origin(found: SpackMirrors) -> str:
    return f"Spack's mirrors ({', '.join(found.files)})"


def _expanded(
    sources: list[str], origin: str, summary: str, environ: Mapping[str, str] | None
) -> ChosenSources:
    """`sources` with `spack` replaced by Spack's binary mirrors."""
    if SPACK_SOURCE not in sources:
        return ChosenSources(list(sources), origin, summary)
    found = _spack_mirrors(environ)
    problems = list(found.problems)
    if found.mirrors:
        origin = f"{origin}; spack: {spack_origin(found)}"
    else:
        looked = ", ".join(found.looked_in) or "no Spack instance, user or system scope"
        message = f"no binary mirror in Spack's configuration (looked in: {looked})"
        problems.append(LoadProblem(SPACK_SOURCE, message))
    expanded = [s for source in sources for s in _one(source, found.urls)]
    return ChosenSources(expanded, origin, summary, problems)


def _one(source: str, spack_urls: list[str]) -> list[str]:
    return spack_urls if source == SPACK_SOURCE else [source]


def _spack_mirrors(environ: Mapping[str, str] | None) -> SpackMirrors:
    from cachetui.sources.spack_config import spack_mirrors  # only when Spack is asked

    return spack_mirrors(environ)
