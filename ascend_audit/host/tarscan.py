"""A bounded look at a tar stream's headers before tarfile parses it.

tarfile reads a GNU long name or a PAX header whole into memory, and lists every member before
anything can be refused; a few KiB of gzip can declare gigabytes of either. This scan reads the
(decompressed) stream block by block, keeping only one header at a time, and refuses oversized
extended headers, too many members, duplicate member names and bombs by declared size.

It walks the stream exactly as tarfile will: a link, device, FIFO or directory header carries
no data whatever its size field says, and a pax `size` record replaces the size of the member
after it, so no header can hide from the scan inside what it took for data. What bundles never
hold (GNU sparse members and maps, Solaris `X` headers, unknown types, chained pax headers) is
refused rather than modelled.
"""

from __future__ import annotations

import gzip
import io
import re
from typing import IO, cast

BLOCK = 512
MAX_EXT_HEADER = 64 * 1024  # bytes of one GNU long name / PAX header
MAX_MEMBERS = 100_000
_EXTENDED = {b"L", b"K", b"x", b"g"}
_REGULAR = {b"0", b"\0", b"7"}  # members whose data follows their header
_NO_DATA = {b"1", b"2", b"3", b"4", b"5", b"6"}  # links, devices, directories, FIFOs
_PAX_RECORD = re.compile(rb"(\d+) ([^=]+)=")  # tarfile's own reading of a record


class TarScanError(Exception):
    """Why the stream is refused."""


def _octal(field: bytes) -> int:
    if field and field[0] == 0x80:  # GNU base-256, positive (0xff: negative, refused)
        return int.from_bytes(field[1:], "big")
    if field and field[0] & 0x80:
        raise TarScanError("a member declares a negative or unreadable size")
    text = field.split(b"\0", 1)[0].strip()
    return int(text, 8) if text else 0


def _pax_records(data: bytes) -> dict[bytes, bytes]:
    """The records of a pax header, read as tarfile reads them."""
    out: dict[bytes, bytes] = {}
    pos = 0
    while True:
        m = _PAX_RECORD.match(data, pos)
        if not m:
            return out
        length = int(m.group(1))
        if length == 0:
            raise TarScanError("a pax record of length 0")
        out[m.group(2)] = data[m.end(2) + 1 : m.start(1) + length - 1]
        pos += length


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
    members, total, pending_ext, pending_pax = 0, 0, 0, 0
    names: set[str] = set()
    long_name: str | None = None
    global_pax: dict[bytes, bytes] = {}
    pax: dict[bytes, bytes] | None = None  # the records of an `x` header for the next member
    try:
        fh = _open_stream(path)
        with fh:
            while True:
                header = fh.read(BLOCK)
                if len(header) < BLOCK or header == b"\0" * BLOCK:
                    break
                size = _octal(header[124:136])
                kind = header[156:157]
                if kind == b"\0" and header[0:100].split(b"\0", 1)[0].endswith(b"/"):
                    kind = b"5"  # tarfile takes an old-style file named "x/" for a directory
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
                    elif kind in (b"x", b"g"):
                        records = _pax_records(data[:size])
                        if any(k.startswith(b"GNU.sparse") for k in records):
                            raise TarScanError("a GNU sparse map (bundles hold plain files)")
                        if kind == b"g":
                            global_pax.update(records)
                        else:
                            pending_pax += 1
                            if pending_pax > 1:
                                raise TarScanError("a chain of pax headers")
                            pax = {**global_pax, **records}
                    continue
                if kind not in _REGULAR and kind not in _NO_DATA:
                    raise TarScanError(
                        f"a member of type {kind!r} (bundles hold plain files and folders)"
                    )
                name = long_name or _name(header)
                if pax is not None and b"path" in pax:  # tarfile names the member by it
                    name = pax[b"path"].decode("utf-8", "replace")
                if pax is not None and b"size" in pax:
                    try:
                        size = int(pax[b"size"])
                    except ValueError:
                        raise TarScanError("a pax size that is not a number") from None
                    if size < 0:
                        raise TarScanError("a member declares a negative size")
                pending_ext, pending_pax, pax = 0, 0, None
                members += 1
                if members > MAX_MEMBERS:
                    raise TarScanError(f"more than {MAX_MEMBERS} members")
                long_name = None
                norm = "/".join(p for p in name.split("/") if p not in ("", "."))
                if norm in names:
                    raise TarScanError(f"member {norm!r} appears twice")
                names.add(norm)
                if kind in _REGULAR:
                    total += size
                    if total > max_total:
                        raise TarScanError(f"declares more than {max_total} bytes")
                    _skip(fh, (size + BLOCK - 1) // BLOCK * BLOCK)
    except (OSError, EOFError, ValueError, io.UnsupportedOperation) as exc:
        raise TarScanError(f"not a readable tar stream ({exc})") from None
    return members, total


def _name(header: bytes) -> str:
    name = header[0:100].split(b"\0", 1)[0]
    prefix = header[345:500].split(b"\0", 1)[0] if header[257:262] == b"ustar" else b""
    full = prefix + b"/" + name if prefix else name
    return full.decode("utf-8", "replace")
