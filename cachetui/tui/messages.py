"""Messages that workers post to the main screen (messages up)."""

from __future__ import annotations

from textual.message import Message

from cachetui.index.filter import Result
from cachetui.service import LoadReport


class LoadAdvanced(Message):
    def __init__(self, done: int, total: int, specs: int) -> None:
        super().__init__()
        self.done, self.total, self.specs = done, total, specs


class DownloadAdvanced(Message):
    """A download under way: bytes so far, and in all when the server said."""

    def __init__(self, url: str, done: int, total: int | None) -> None:
        super().__init__()
        self.url, self.done, self.total = url, done, total


class Loaded(Message):
    def __init__(self, report: LoadReport) -> None:
        super().__init__()
        self.report = report


class LoadFailed(Message):
    def __init__(self, reason: str) -> None:
        super().__init__()
        self.reason = reason


class ResultReady(Message):
    def __init__(self, result: Result, generation: int) -> None:
        super().__init__()
        self.result, self.generation = result, generation


class QueryRejected(Message):
    """The search text parsed, but asks what the loaded sources cannot answer (`^` where
    none has dependencies): `start` indexes the text, as QueryError's does."""

    def __init__(self, text: str, reason: str, start: int, generation: int) -> None:
        super().__init__()
        self.text, self.reason, self.start, self.generation = text, reason, start, generation


# -- what the command palette asks of the screen it was opened on ------------------------


class GoToPackage(Message):
    def __init__(self, package: int) -> None:
        super().__init__()
        self.package = package


class ToggleFilter(Message):
    def __init__(self, facet: str, value: str) -> None:
        super().__init__()
        self.facet, self.value = facet, value


class SwitchTag(Message):
    """Show one cache tag only (`tag` None: every tag)."""

    def __init__(self, tag: str | None) -> None:
        super().__init__()
        self.tag = tag


class CompareTags(Message):
    def __init__(self, old: str, new: str) -> None:
        super().__init__()
        self.old, self.new = old, new


class LookUpHash(Message):
    def __init__(self, prefix: str) -> None:
        super().__init__()
        self.prefix = prefix
