"""The bundle pre-scan walks a tar stream exactly as tarfile will, so no header hides from it.

Each crafted stream puts a 70,000-byte GNU long-name header (over the scan's 64 KiB limit) where
tarfile reads the next header, behind something a naive scan takes for member data: a directory
header with a size, an old-style file named "d/" (a directory to tarfile), or a pax `size=0`
record. tarfile itself is shown to reach the long name; the scan must refuse the stream.
"""

from __future__ import annotations

import gzip
import tarfile
from pathlib import Path

import pytest

from ascend_audit.host.tarscan import MAX_EXT_HEADER, TarScanError, scan_tar

BLOCK = 512
LONG = 70_000  # a long name over MAX_EXT_HEADER
HIDE = ((LONG + BLOCK - 1) // BLOCK + 2) * BLOCK  # enough "data" to cover the long name


def _pad(data: bytes) -> bytes:
    return data + b"\0" * (-len(data) % BLOCK)


def _header(name: str, kind: bytes, size: int) -> bytes:
    info = tarfile.TarInfo(name)
    info.type, info.size, info.mode = kind, size, 0o644
    return info.tobuf(tarfile.USTAR_FORMAT)


def _long_name_behind() -> bytes:
    name = b"n" * (LONG - 1) + b"\0"
    return _header("././@LongLink", tarfile.GNUTYPE_LONGNAME, LONG) + _pad(name)


def _pax(records: dict[str, str]) -> bytes:
    body = b""
    for k, v in records.items():
        rec = f" {k}={v}\n".encode()
        n = len(rec) + 1
        while len(str(n)) + len(rec) != n:
            n += 1
        body += str(n).encode() + rec
    return _header("././@PaxHeader", tarfile.XHDTYPE, len(body)) + _pad(body)


def _end() -> bytes:
    return _header("after", tarfile.REGTYPE, 0) + b"\0" * (2 * BLOCK)


STREAMS = {
    "directory-with-a-size": lambda: _header("d", tarfile.DIRTYPE, HIDE) + _long_name_behind(),
    "old-style-file-named-like-a-directory": lambda: (
        _header("d/", tarfile.AREGTYPE, HIDE) + _long_name_behind()
    ),
    "pax-size-zero": lambda: (
        _pax({"size": "0"}) + _header("f", tarfile.REGTYPE, HIDE) + _long_name_behind()
    ),
}


@pytest.mark.parametrize("how", sorted(STREAMS))
def test_a_header_behind_what_looks_like_data_is_seen(tmp_path: Path, how):
    path = tmp_path / "bundle.tar.gz"
    raw = STREAMS[how]() + _end()
    path.write_bytes(gzip.compress(raw))
    with tarfile.open(path, "r:gz") as tf:  # tarfile does read the long name whole
        assert any(len(m.name) == LONG - 1 for m in tf.getmembers()), how
    with pytest.raises(TarScanError, match=f"extended header of {LONG} bytes"):
        scan_tar(str(path), 1 << 30)
    assert LONG > MAX_EXT_HEADER


@pytest.mark.parametrize(
    "kind, words",
    [
        (tarfile.GNUTYPE_SPARSE, "type b'S'"),
        (tarfile.SOLARIS_XHDTYPE, "type b'X'"),
        (b"Z", "type b'Z'"),
    ],
)
def test_what_bundles_never_hold_is_refused(tmp_path: Path, kind, words):
    path = tmp_path / "b.tar"
    path.write_bytes(_header("m", kind, BLOCK) + b"\0" * BLOCK + _end())
    with pytest.raises(TarScanError, match=words):
        scan_tar(str(path), 1 << 30)


def test_gnu_sparse_maps_and_pax_chains_are_refused(tmp_path: Path):
    sparse = tmp_path / "sparse.tar"
    sparse.write_bytes(
        _pax({"GNU.sparse.major": "1", "GNU.sparse.minor": "0"})
        + _header("f", tarfile.REGTYPE, 0)
        + _end()
    )
    with pytest.raises(TarScanError, match="sparse"):
        scan_tar(str(sparse), 1 << 30)
    chain = tmp_path / "chain.tar"
    chain.write_bytes(_pax({"size": "0"}) + _pax({"size": "0"}) + _header("f", b"0", 0) + _end())
    with pytest.raises(TarScanError, match="chain of pax headers"):
        scan_tar(str(chain), 1 << 30)


def test_a_pax_size_counts_toward_the_declared_total(tmp_path: Path):
    path = tmp_path / "b.tar"
    big = 3 * BLOCK
    path.write_bytes(
        _pax({"size": str(big)}) + _header("f", tarfile.REGTYPE, 0) + b"x" * big + _end()
    )
    assert scan_tar(str(path), 1 << 30) == (2, big)
    with pytest.raises(TarScanError, match="declares more than"):
        scan_tar(str(path), big - 1)


def test_a_bundle_tarfile_writes_with_long_and_non_ascii_names_passes(tmp_path: Path):
    src = tmp_path / "src"
    deep = src / ("d" * 120) / "κατάλογος"
    deep.mkdir(parents=True)
    (deep / ("f" * 150)).write_text("x" * 1000)
    path = tmp_path / "b.tar.gz"
    with tarfile.open(path, "w:gz") as tf:
        tf.add(src, arcname="root")
    members, total = scan_tar(str(path), 1 << 30)
    assert (members, total) == (4, 1000)
