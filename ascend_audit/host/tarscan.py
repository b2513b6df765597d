"""A bounded look at a tar stream's headers before tarfile parses it.

tarfile reads a GNU long name or a PAX header whole into memory, and lists every member before
anything can be refused; a few KiB of gzip can declare gigabytes of either. This scan reads the
(decompressed) stream block by block, keeping only one header at a time, and refuses oversized
extended headers, too many members, duplicate member names and bombs by declared size.
"""

from __future__ import annotations

import gzip
import io
from typing import IO, cast

BLOCK = 512
MAX_EXT_HEADER = 64 * 1024  # bytes of one GNU long name / PAX header
MAX_MEMBERS = 100_000
_EXTENDED = {b"L", b"K", b"x", b"g"}


class TarScanError(Exception):
    """Why the stream is refused."""


def _octal(field: bytes) -> int:
    if field and field[0] & 0x80:  # GNU base-256
        value = int.from_bytes(field[1:], "big")
        return -value if field[0] & 0x40 else value
    text = field.split(b"\0", 1)[0].strip()
    return int(text, 8) if text else 0


def _skip(fh: IO[bytes], n: int) -> None:
    while n > 0:
        chunk = fh.read(min(n, 1 << 20))
        if not chunk:
            raise TarScanError("truncated: the stream ends inside a member")
        n -= len(chunk)


def _open_stream(path: str) -> IO[bytes]:
    with open(path, "rb") as probe:
        magic = probe.read(3)
    if magic[:2] == b"\x1f\x8b":
        return cast("IO[bytes]", gzip.open(path, "rb"))
    if magic[:3] == b"BZh":
        import bz2

        return bz2.open(path, "rb")
    if magic[:3] == b"\xfd7z":
        import lzma

        return lzma.open(path, "rb")
    return open(path, "rb")


def scan_tar(path: str, max_total: int) -> tuple[int, int]:
    """(members, declared bytes) of a tar file, refusing what tarfile must not be given."""
    members, total, pending_ext = 0, 0, 0
    names: set[str] = set()
    long_name: str | None = None
    try:
        fh = _open_stream(path)
        with fh:
            while True:
                header = fh.read(BLOCK)
                if len(header) < BLOCK or header == b"\0" * BLOCK:
                    break
                size = _octal(header[124:136])
                kind = header[156:157]
                if size < 0:
                    raise TarScanError("a member declares a negative size")
                padded = (size + BLOCK - 1) // BLOCK * BLOCK
                if kind in _EXTENDED:
                    if size > MAX_EXT_HEADER:
                        raise TarScanError(
                            f"an extended header of {size} bytes (limit {MAX_EXT_HEADER})"
                        )
                    pending_ext += 1
                    if pending_ext > 8:
                        raise TarScanError("a chain of extended headers")
                    data = fh.read(padded)
                    if kind == b"L":
                        long_name = data[:size].split(b"\0", 1)[0].decode("utf-8", "replace")
                    continue
                pending_ext = 0
                members += 1
                if members > MAX_MEMBERS:
                    raise TarScanError(f"more than {MAX_MEMBERS} members")
                name = long_name or _name(header)
                long_name = None
                norm = "/".join(p for p in name.split("/") if p not in ("", "."))
                if norm in names:
                    raise TarScanError(f"member {norm!r} appears twice")
                names.add(norm)
                if kind in (b"0", b"\0", b"7"):
                    total += size
                    if total > max_total:
                        raise TarScanError(f"declares more than {max_total} bytes")
                _skip(fh, padded)
    except (OSError, EOFError, ValueError, io.UnsupportedOperation) as exc:
        raise TarScanError(f"not a readable tar stream ({exc})") from None
    return members, total


def _name(header: bytes) -> str:
    name = header[0:100].split(b"\0", 1)[0]
    prefix = header[345:500].split(b"\0", 1)[0] if header[257:262] == b"ustar" else b""
    full = prefix + b"/" + name if prefix else name
    return full.decode("utf-8", "replace")
