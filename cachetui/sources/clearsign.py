"""OpenPGP clear-signed documents (Spack signs spec files and v3 manifests this way)."""

from __future__ import annotations

BEGIN = b"-----BEGIN PGP SIGNED MESSAGE-----"


def strip_clearsign(data: bytes) -> bytes:
    """The signed text of a clear-signed message, or the data as it is. The signature is
    not checked: cachetui shows what a cache holds, it does not install from it."""
    if not data.lstrip().startswith(BEGIN):
        return data
    for blank in (b"\n\n", b"\r\n\r\n"):  # the armor headers (Hash: ...) end at a blank line
        if blank in data:
            data = data.split(blank, 1)[1]
            break
    return data.split(b"-----BEGIN PGP SIGNATURE-----", 1)[0]
