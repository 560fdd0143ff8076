"""Spack mirrors: where a mirror keeps its index, what a database's location says about the
specs in it (tag, stack), and the URLs of a binary's files (spack-formats.md §1.1, §2).
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass

import msgspec

from cachetui.sources.clearsign import strip_clearsign
from cachetui.urls import is_url

V3_INDEX = "v3/manifests/index/index.manifest.json"
V2_INDEX = "build_cache/index.json"
MIRROR_DIRECTORIES = frozenset({"build_cache", "v3", "blobs"})  # what a walk skips in a mirror root

# A cache.spack.io ref: develop, a weekly snapshot, a release (older ones under releases/).
_REF = re.compile(r"^(develop|develop-\d{4}-\d{2}-\d{2}|v\d+\.\d+(\.\d+)?)$")
_BLOB = re.compile(r"^(.*?)/?blobs/[a-z0-9]+/[0-9a-f]{2}/[0-9a-f]+$")
_SPEC_MANIFEST = re.compile(r"^(.*)/v3/manifests/spec/[^/]+/[^/]+\.spec\.manifest\.json$")
_V2_SPEC_FILE = re.compile(r"^(.*)/build_cache/[^/]+-[a-z2-7]{32}\.spec\.(json|json\.sig|yaml)$")


def has_urls(sources: list[str]) -> bool:
    return any(map(is_url, sources))


@dataclass(frozen=True)
class Origin:
    """Where a database came from: enough to name its specs' tag and stacks and their files."""

    root: str | None = None  # the mirror root, a URL or a local path; None when not known
    layout: int | None = None  # 2 (build_cache/) or 3 (v3/ + blobs/)
    tag: str | None = None  # None: not known
    stacks: tuple[str, ...] = ()

    def with_labels(self, tag: str | None, stack: str | None) -> Origin:
        return Origin(self.root, self.layout, tag or self.tag, (stack,) if stack else self.stacks)


def local_index(directory: str) -> tuple[str, int] | None:
    """(the index file, its layout) when `directory` is a mirror root: v3 first, as Spack does."""
    for relative, layout in ((V3_INDEX, 3), (V2_INDEX, 2)):
        path = os.path.join(directory, *relative.split("/"))
        if os.path.isfile(path):
            return path, layout
    return None


def origin_of(location: str) -> Origin:
    """What the location of an index says: the mirror root and layout when it sits where a
    mirror keeps its index (or is a blob of one), and the tag and stack when the root's path
    looks like binaries.spack.io's (`<ref>/` is the root stack, `<ref>/<stack>/` a stack)."""
    text = location.replace("\\", "/").rstrip("/")
    root, layout = None, None
    if text.endswith("/" + V2_INDEX):
        root, layout = text[: -len(V2_INDEX) - 1], 2
    elif "/v3/manifests/index/" in text and text.endswith("/index.manifest.json"):
        root, layout = text[: text.index("/v3/manifests/index/")], 3
    elif (manifest := _SPEC_MANIFEST.match(text)) is not None:
        root, layout = manifest.group(1), 3
    elif (spec_file := _V2_SPEC_FILE.match(text)) is not None:
        root, layout = spec_file.group(1), 2
    elif (blob := _BLOB.match(text)) is not None:
        root, layout = blob.group(1), 3
    if root is None:
        return Origin()
    # Only a server's paths follow binaries.spack.io's naming; on a disk, ~/develop/x is
    # just a directory.
    tag, stack = labels_of(root) if is_url(root) else (None, None)
    return Origin(root, layout, tag, (stack,) if stack else ())


def labels_of(root: str) -> tuple[str | None, str | None]:
    """(tag, stack) from a mirror root's path: `…/develop` -> (develop, root),
    `…/v0.21.0/e4s` -> (v0.21.0, e4s), `…/releases/v0.20/tutorial` -> (v0.20, tutorial)."""
    parts = [p for p in root.split("/") if p]
    for i in range(len(parts) - 1, -1, -1):
        if _REF.match(parts[i]):
            rest = parts[i + 1 :]
            if len(rest) > 1:
                return None, None  # deeper than a stack: not that layout
            return parts[i], rest[0] if rest else "root"
    return None, None


# A v2 mirror's spec file, in the order Spack looks for it: signed, unsigned, and Spack
# 0.16's YAML (its spec files' names differ only in these endings).
SPEC_FILE_SUFFIXES = (".spec.json.sig", ".spec.json", ".spec.yaml")


@dataclass(frozen=True)
class BinaryFiles:
    spec_file: str | None = (
        None  # v2: the spec file the mirror holds (signed unless found otherwise)
    )
    tarball: str | None = None  # v2 only: in v3 the tarball's checksum is in the spec manifest
    manifest: str | None = None  # v3: the spec manifest


def binary_files(
    origin_root: str | None,
    layout: int | None,
    name: str,
    version: str,
    hash_: str,
    platform: str,
    os_: str,
    target: str,
    compiler: str,
    spec_suffix: str | None = None,
) -> BinaryFiles:
    """The URLs (or paths) of a binary's files in its mirror, by Spack's naming rules
    (`spec_suffix`: which spec file a v2 mirror was found to hold; signed when not known)."""
    if origin_root is None:
        return BinaryFiles()
    root = origin_root.rstrip("/")
    if layout == 3:
        return BinaryFiles(
            manifest=f"{root}/v3/manifests/spec/{name}/{name}-{version}-{hash_}.spec.manifest.json"
        )
    if layout != 2:
        return BinaryFiles()
    stem = v2_stem(name, version, hash_, platform, os_, target, compiler)
    return BinaryFiles(
        spec_file=f"{root}/build_cache/{stem}{spec_suffix or SPEC_FILE_SUFFIXES[0]}",
        tarball=f"{root}/{v2_tarball_path(name, version, hash_, platform, os_, target, compiler)}",
    )


def v2_stem(
    name: str, version: str, hash_: str, platform: str, os_: str, target: str, compiler: str
) -> str:
    """`linux-ubuntu22.04-x86_64_v3-gcc-11.4.0-zlib-1.3-<hash>`: how a v2 mirror names a
    binary's files."""
    return f"{platform}-{os_}-{target}-{v2_compiler(compiler)}-{name}-{version}-{hash_}"


def v2_tarball_path(
    name: str, version: str, hash_: str, platform: str, os_: str, target: str, compiler: str
) -> str:
    """A binary's tarball below its v2 mirror root:
    `build_cache/<arch>/<compiler>/<name>-<version>/<stem>.spack`. cache.spack.io's summaries
    wrote their `tarball` URLs by this rule too."""
    head, tail = v2_tarball_around_hash(name, version, platform, os_, target, v2_compiler(compiler))
    return f"{head}{hash_}{tail}"


def v2_compiler(compiler: str) -> str:
    """How a v2 mirror's paths write a compiler: `gcc-11.4.0`, or `none-none`."""
    compiler_name, _, compiler_version = compiler.partition("@")
    return f"{compiler_name}-{compiler_version}" if compiler_version else "none-none"


def v2_tarball_around_hash(
    name: str, version: str, platform: str, os_: str, target: str, comp: str
) -> tuple[str, str]:
    """(before the hash, after it) in v2_tarball_path, for a compiler written by v2_compiler:
    what every binary of one build shares."""
    arch = f"{platform}-{os_}-{target}"
    return f"build_cache/{arch}/{comp}/{name}-{version}/{arch}-{comp}-{name}-{version}-", ".spack"


def index_blob_of(data: bytes, source: str) -> str:
    """The blob path (`blobs/<alg>/<c[:2]>/<c>`) of the database a v3 index manifest names.
    Raises FetchError(source, reason) when it names none."""
    return _blob_of(data, source, "application/vnd.spack.db", "index manifest", "a database")


def spec_blob_of(data: bytes, source: str) -> str:
    """The blob path of the spec file a v3 spec manifest names (the other blob is the tarball)."""
    return _blob_of(data, source, "application/vnd.spack.spec", "spec manifest", "a spec file")


def _blob_of(data: bytes, source: str, media_type: str, what: str, names: str) -> str:
    from cachetui.sources.fetch import FetchError

    try:
        manifest = msgspec.json.decode(strip_clearsign(data))
    except msgspec.DecodeError as error:
        raise FetchError(source, f"{what} is not valid JSON ({error})") from None
    except UnicodeDecodeError:
        raise FetchError(source, f"{what} is not valid UTF-8") from None
    except RecursionError:
        raise FetchError(source, f"{what} is nested too deeply to read") from None
    records = manifest.get("data") if isinstance(manifest, dict) else None
    for record in records if isinstance(records, list) else ():
        if isinstance(record, dict) and str(record.get("mediaType", "")).startswith(media_type):
            algorithm, checksum = record.get("checksumAlgorithm"), record.get("checksum")
            if (
                isinstance(algorithm, str)
                and isinstance(checksum, str)
                and re.fullmatch(r"[a-z0-9]+", algorithm)
                and re.fullmatch(r"[0-9a-f]{8,128}", checksum)
            ):
                return f"blobs/{algorithm}/{checksum[:2]}/{checksum}"
            raise FetchError(source, f"{what} names {names} without a valid checksum")
    raise FetchError(
        source, f"{what} names no {names.removeprefix('a ')} (no data record of type {media_type}…)"
    )
