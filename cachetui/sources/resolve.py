"""From SOURCE arguments to the local files to read, each with what its location says.

A SOURCE is a file, a directory (walked; a mirror root inside it contributes its index
only, v3 before v2), a `cache_spack_io_index.json`-style map of tags to stacks, or an
http(s)/file/s3 URL to any of these. URLs are fetched here, into the on-disk cache
(re-fetched only when they changed), so that the readers only ever see local files.
"""

from __future__ import annotations

import os
import re
import stat
import urllib.parse
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import msgspec

from cachetui.model import LoadProblem
from cachetui.sources.chunks import SourceFile
from cachetui.sources.discover import Stamp, discover_stamped, stamp_of
from cachetui.sources.fetch import (
    Fetched,
    FetchError,
    fetch,
    join_url,
    normalise_url,
    read_body,
)
from cachetui.sources.mirror import (
    V2_INDEX,
    V3_INDEX,
    Origin,
    index_blob_of,
    labels_of,
    origin_of,
    spec_blob_of,
)
from cachetui.urls import has_scheme, is_remote_url, is_url

# (url, bytes done, bytes in all or None): a download under way.
DownloadProgress = Callable[[str, int, int | None], None]

_MAP_HEAD = re.compile(rb'\A\s*\{\s*"[^"]+"\s*:\s*\[\s*(\]|\{\s*"(label|url)")')
_MANIFEST_HEAD = re.compile(rb'\A\s*(-----BEGIN PGP SIGNED MESSAGE-----|\{\s*"(version|data)"\s*:)')
_SNIFF_BYTES = 4096
_INDEX_SUFFIXES = (os.sep + V3_INDEX.replace("/", os.sep), os.sep + V2_INDEX.replace("/", os.sep))
_MAP_MOST_BYTES = 16 * 1024 * 1024  # a tag map lists a few hundred indexes


@dataclass
class Resolved:
    files: list[SourceFile] = field(default_factory=list)
    stamps: list[Stamp] = field(default_factory=list)
    problems: list[LoadProblem] = field(default_factory=list)
    # What fetching said about this start, not about the sources (offline: a copy downloaded
    # before was used). Also in `problems`; kept apart so that what depends on the sources
    # (the on-disk index, and whether it is current) can leave them out.
    notes: list[LoadProblem] = field(default_factory=list)


def resolve(
    sources: list[str], cache_dir: Path | None, on_download: DownloadProgress | None = None
) -> Resolved:
    resolver = _Resolver(cache_dir, on_download)
    for source in sources:
        resolver.any(source, None)
    return resolver.out


class _Resolver:
    def __init__(self, cache_dir: Path | None, on_download: DownloadProgress | None) -> None:
        self.cache_dir = cache_dir
        self.on_download = on_download
        self.out = Resolved()
        self._maps_seen: set[str] = set()

    def any(
        self, source: str, labels: tuple[str | None, str | None] | None, remote_base: bool = False
    ) -> None:
        """One source, whatever it is; whatever goes wrong is a problem naming it, and the
        other sources still load."""
        try:
            if is_url(source):
                if remote_base and not is_remote_url(source):
                    # A map fetched from a server names only what is on servers: never a file here.
                    self.out.problems.append(
                        LoadProblem(
                            source,
                            "a tag map fetched over the network may only list http(s) and s3 URLs; "
                            "skipped",
                        )
                    )
                else:
                    self.url(source, labels)
            else:
                self.local(source, labels)
        except FetchError as error:
            self.out.problems.append(LoadProblem(error.url, error.reason))
        except RecursionError:
            self.out.problems.append(LoadProblem(source, "data is nested too deeply to read"))
        except (OSError, ValueError) as error:  # a NUL in a path, a malformed URL, ...
            reason = (
                error.strerror
                if isinstance(error, OSError) and error.strerror
                else str(error) or type(error).__name__
            )
            self.out.problems.append(LoadProblem(source, f"cannot read: {reason}"))

    # -- local paths ----------------------------------------------------------------------

    def local(self, source: str, labels: tuple[str | None, str | None] | None = None) -> None:
        path = os.path.expanduser(source)
        try:
            is_dir = stat.S_ISDIR(os.stat(path).st_mode)
        except OSError:
            is_dir = False
        if is_dir:
            files, stamps, problems = discover_stamped([path])
            self.out.stamps.extend(stamps)
            self.out.problems.extend(
                p if p.source != path else LoadProblem(source, p.message, p.severity)
                for p in problems
            )
            for file, origin in _mirror_indexes(files):
                self._local_file(file, origin, labels)
            return
        files, stamps, problems = discover_stamped([path])
        self.out.stamps.extend(stamps)
        self.out.problems.extend(LoadProblem(source, p.message, p.severity) for p in problems)
        for file in files:
            head = _head(file)
            if _MAP_HEAD.match(head):
                self.tag_map(
                    file,
                    read_body(Path(file), file, _MAP_MOST_BYTES),
                    base=os.path.dirname(os.path.abspath(file)),
                )
            else:
                origin = origin_of(os.path.abspath(file))
                self._local_file(file, origin if origin.root is not None else None, labels)

    def _local_file(self, file: str, origin: Origin | None, labels) -> None:
        blob_of = (
            index_blob_of
            if file.endswith("index.manifest.json")
            else spec_blob_of
            if file.endswith(".spec.manifest.json")
            else None
        )
        if origin is not None and origin.layout == 3 and blob_of is not None:
            assert origin.root is not None  # an origin knows its layout only with its root
            # The blob it names is read too: stamp it, so that a blob put right is seen.
            try:
                with open(file, "rb") as handle:
                    blob = blob_of(handle.read(_MAP_MOST_BYTES), file)
                self.out.stamps.append(stamp_of(os.path.join(origin.root, *blob.split("/"))))
            except (OSError, FetchError, RecursionError):
                pass  # the reader says what is wrong with it
        self.out.files.append(SourceFile(file, _labelled(origin, labels)))

    # -- URLs -----------------------------------------------------------------------------

    def url(self, url: str, labels: tuple[str | None, str | None] | None) -> None:
        url = normalise_url(url)
        if url.lower().startswith("file://"):  # a local file or directory, as any path
            parts = urllib.parse.urlsplit(url)
            self.local(urllib.request.url2pathname(parts.path), labels)
            return
        if _looks_like_root(url):
            self._mirror_root(url, labels)
        else:
            self._document(url, labels)

    def _mirror_root(self, root: str, labels) -> None:
        """v3 first, as Spack does; then v2 (also when v3 cannot be reached: offline, a v2
        index fetched before may be in the cache)."""
        try:
            fetched = self._fetch(join_url(root, V3_INDEX))
        except FetchError as v3_error:
            index = join_url(root, V2_INDEX)
            try:
                fetched = self._fetch(index, hash_url=index + ".hash")
            except FetchError as v2_error:
                raise v2_error if v3_error.reason.startswith("not found") else v3_error from None
            if not v3_error.reason.startswith("not found"):
                self.out.problems.append(
                    LoadProblem(
                        v3_error.url, f"{v3_error.reason}; read the v2 index instead", "warning"
                    )
                )
            self._add(fetched, _labelled(Origin(root.rstrip("/"), 2, *_tag_stack(root)), labels))
            return
        self._manifest(fetched, root.rstrip("/"), labels)

    def _document(self, url: str, labels) -> None:
        hash_url = url + ".hash" if url.endswith("/index.json") else None
        fetched = self._fetch(url, hash_url=hash_url)
        head = _head(str(fetched.path))
        origin = origin_of(url)
        if _MAP_HEAD.match(head):
            self.tag_map(
                url, read_body(fetched.path, url, _MAP_MOST_BYTES), base=url.rsplit("/", 1)[0]
            )
        elif (
            _MANIFEST_HEAD.match(head)
            and origin.layout == 3
            and url.endswith("index.manifest.json")
        ):
            self._manifest(fetched, origin.root or url.rsplit("/", 1)[0], labels)
        else:
            self._add(fetched, _labelled(origin, labels))

    def _manifest(self, fetched: Fetched, root: str, labels) -> None:
        """A v3 index manifest: fetch the database blob it names."""
        blob = index_blob_of(read_body(fetched.path, fetched.url, _MAP_MOST_BYTES), fetched.url)
        self._add(
            self._fetch(join_url(root, blob)), _labelled(Origin(root, 3, *_tag_stack(root)), labels)
        )

    def _fetch(self, url: str, hash_url: str | None = None) -> Fetched:
        on_download = self.on_download  # (set once, in __init__)
        progress = (lambda done, total: on_download(url, done, total)) if on_download else None
        return fetch(url, self.cache_dir, progress=progress, hash_url=hash_url)

    def _add(self, fetched: Fetched, origin: Origin | None) -> None:
        if fetched.note:
            note = LoadProblem(fetched.url, fetched.note, "warning")
            self.out.problems.append(note)
            self.out.notes.append(note)
        self.out.files.append(SourceFile(str(fetched.path), origin, fetched.url))
        self.out.stamps.append(stamp_of(str(fetched.path)))

    # -- tag maps -------------------------------------------------------------------------

    def tag_map(self, name: str, data: bytes, base: str) -> None:
        """`{tag: [{label, url}]}`: every index it lists, its specs labelled with the tag and
        the stack. Relative URLs are taken from where the map is."""
        seen_as = name if is_url(name) else os.path.realpath(name)
        if seen_as in self._maps_seen:
            return  # (a map that lists itself, or two that list each other)
        self._maps_seen.add(seen_as)
        try:
            mapping = msgspec.json.decode(data)
        except msgspec.DecodeError as error:
            self.out.problems.append(LoadProblem(name, f"not valid JSON ({error})"))
            return
        if not isinstance(mapping, dict):
            self.out.problems.append(
                LoadProblem(name, "a tag map should be a mapping of tags to lists of {label, url}")
            )
            return
        for tag, stacks in mapping.items():
            if not isinstance(stacks, list):
                self.out.problems.append(
                    LoadProblem(name, f"tag {tag!r}: should list {{label, url}} records; skipped")
                )
                continue
            for entry in stacks:
                label, url = (
                    (entry.get("label"), entry.get("url"))
                    if isinstance(entry, dict)
                    else (None, None)
                )
                if not isinstance(url, str) or not url.strip():
                    self.out.problems.append(
                        LoadProblem(name, f"tag {tag!r}: a record without a url; skipped")
                    )
                    continue
                labels = (str(tag), label if isinstance(label, str) and label.strip() else None)
                url = url.strip()
                remote = is_url(base)
                if is_url(url) or has_scheme(url):
                    self.any(url, labels, remote_base=remote)
                elif remote:
                    self.any(join_url(base, url), labels, remote_base=True)
                else:
                    self.any(os.path.join(base, url), labels)


def _mirror_indexes(files: list[str]) -> list[tuple[str, Origin | None]]:
    """Files from a walk, each mirror index (the walk takes only that from a mirror root)
    with its origin."""
    out: list[tuple[str, Origin | None]] = []
    for file in files:
        origin = origin_of(file) if file.endswith(_INDEX_SUFFIXES) else None
        out.append((file, origin if origin is not None and origin.root is not None else None))
    return out


def _looks_like_root(url: str) -> bool:
    """A URL that names a directory (a mirror root) rather than a document: it ends in `/`,
    has no path, or its last part is not a file name (`.json`, `.gz`, `.md`, `.sig`, a blob)."""
    path = urllib.parse.urlsplit(url).path
    last = path.rstrip("/").rsplit("/", 1)[-1]
    if url.endswith("/") or not last:
        return True
    return not (
        re.search(r"\.(json|gz|md|sig|yaml)$", last, re.IGNORECASE)
        or re.fullmatch(r"[0-9a-f]{32,128}", last)
    )


def _tag_stack(root: str) -> tuple[str | None, tuple[str, ...]]:
    tag, stack = labels_of(root.rstrip("/"))
    return tag, (stack,) if stack else ()


def _labelled(origin: Origin | None, labels: tuple[str | None, str | None] | None) -> Origin | None:
    if labels is None:
        return origin
    return (origin or Origin()).with_labels(*labels)


def _head(path: str) -> bytes:
    try:
        with open(path, "rb") as handle:
            head = handle.read(_SNIFF_BYTES)
    except OSError:
        return b""
    if head[:2] == b"\x1f\x8b":  # a gzip blob: its first bytes, inflated
        import zlib

        try:
            return zlib.decompressobj(31).decompress(head, _SNIFF_BYTES)
        except zlib.error:
            return b""
    return head
