"""Model weight integrity: safetensors headers, shard index, sampled-block manifests."""

from __future__ import annotations

import hashlib
import json
import os
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ascend_audit.facts.common import Problems as _Problems
from ascend_audit.facts.common import to_jsonable as _jsonable
from ascend_audit.safe_io import open_regular

if TYPE_CHECKING:
    from ascend_audit.progress import ByteProgress

__all__ = [
    "DTYPE_BITS",
    "MANIFEST_VERSION",
    "IndexCheck",
    "ManifestCheck",
    "SafetensorsHeader",
    "TensorInfo",
    "check_index",
    "read_safetensors_header",
    "sample_blocks",
    "verify_manifest",
    "write_manifest",
]

MANIFEST_VERSION = 1
MAX_HEADER = 100 * 1024 * 1024  # safetensors itself refuses headers above 100 MB
_CHUNK = 1024 * 1024

# bits per element of every safetensors dtype (sub-byte types pack)
DTYPE_BITS: dict[str, int] = {
    "BOOL": 8,
    "U8": 8,
    "I8": 8,
    "F8_E4M3": 8,
    "F8_E5M2": 8,
    "F8_E8M0": 8,
    "F4": 4,
    "F6_E2M3": 6,
    "F6_E3M2": 6,
    "I16": 16,
    "U16": 16,
    "F16": 16,
    "BF16": 16,
    "I32": 32,
    "U32": 32,
    "F32": 32,
    "C64": 64,
    "F64": 64,
    "I64": 64,
    "U64": 64,
}


@dataclass(frozen=True)
class TensorInfo:
    """One tensor entry of a safetensors header (offsets relative to the data section)."""

    name: str
    dtype: str
    shape: tuple[int, ...]
    begin: int
    end: int

    @property
    def nbytes(self) -> int:
        return self.end - self.begin

    @property
    def expected_nbytes(self) -> int | None:
        """Bytes dtype x shape needs (None for an unknown dtype)."""
        bits = DTYPE_BITS.get(self.dtype)
        if bits is None:
            return None
        n = 1
        for d in self.shape:
            n *= d
        return (n * bits + 7) // 8


@dataclass(frozen=True)
class SafetensorsHeader:
    """What a safetensors file's header says, and whether the file agrees with it."""

    path: str
    file_size: int | None
    header_len: int | None
    header_sha256: str | None  # of the 8 length bytes + the JSON header
    tensors: tuple[TensorInfo, ...]
    metadata: tuple[tuple[str, str], ...]
    data_size: int  # bytes the tensors cover (max end offset)
    problems: tuple[str, ...] = ()

    @property
    def ok(self) -> bool:
        return not self.problems

    def tensor(self, name: str) -> TensorInfo | None:
        """Entry of one tensor by name."""
        for t in self.tensors:
            if t.name == name:
                return t
        return None

    def to_dict(self) -> dict[str, Any]:
        return _jsonable(self)


def _header_fail(path: str, size: int | None, hlen: int | None, msg: str) -> SafetensorsHeader:
    return SafetensorsHeader(path, size, hlen, None, (), (), 0, (msg,))


def _read_at(f: Any, offset: int, n: int) -> bytes:
    f.seek(offset)
    parts: list[bytes] = []
    left = n
    while left > 0:
        b = f.read(min(left, _CHUNK))
        if not b:
            break
        parts.append(b)
        left -= len(b)
    return b"".join(parts)


def read_safetensors_header(path: str | os.PathLike[str]) -> SafetensorsHeader:
    """Read and validate a safetensors header without reading the tensor data."""
    p = os.fspath(path)
    try:
        size = os.stat(p).st_size
        with open_regular(p) as f:
            head = f.read(8)
            if len(head) < 8:
                return _header_fail(p, size, None, f"file is {size} bytes: too short for a header")
            hlen = int.from_bytes(head, "little")
            if hlen > MAX_HEADER:
                return _header_fail(p, size, hlen, f"header length {hlen} exceeds 100 MB: lying")
            if hlen > size - 8:
                return _header_fail(
                    p, size, hlen, f"header length {hlen} exceeds the file ({size} bytes)"
                )
            raw = _read_at(f, 8, hlen)
    except OSError as exc:
        return _header_fail(p, None, None, f"cannot read: {exc.strerror or exc}")
    if len(raw) < hlen:
        return _header_fail(p, size, hlen, "file shorter than its header length (truncated)")
    digest = hashlib.sha256(head + raw).hexdigest()
    return _validate(p, size, hlen, raw, digest)


def _validate(path: str, size: int, hlen: int, raw: bytes, digest: str) -> SafetensorsHeader:
    probs = _Problems()
    try:
        doc = json.loads(raw.decode("utf-8"))
    except UnicodeDecodeError:
        return SafetensorsHeader(path, size, hlen, digest, (), (), 0, ("header is not UTF-8",))
    except (ValueError, RecursionError) as exc:
        msg = f"header is not JSON: {str(exc)[:120]}"
        return SafetensorsHeader(path, size, hlen, digest, (), (), 0, (msg,))
    if not isinstance(doc, dict):
        return SafetensorsHeader(
            path, size, hlen, digest, (), (), 0, ("header JSON is not an object",)
        )
    meta: list[tuple[str, str]] = []
    tensors: list[TensorInfo] = []
    for name, entry in doc.items():
        if name == "__metadata__":
            if not isinstance(entry, dict):
                probs.add("__metadata__ is not an object")
                continue
            for k, v in entry.items():
                if not isinstance(v, str):
                    probs.add(f"__metadata__[{k!r}] is not a string")
                meta.append((str(k), v if isinstance(v, str) else json.dumps(v)[:200]))
            continue
        t = _tensor(name, entry, probs)
        if t is not None:
            tensors.append(t)
    data_len = size - 8 - hlen
    ordered = sorted(tensors, key=lambda t: (t.begin, t.end))
    pos = 0
    for t in ordered:
        if t.begin < pos:
            probs.add(f"tensor {t.name!r} [{t.begin}, {t.end}) overlaps the previous tensor")
        elif t.begin > pos:
            probs.add(f"gap of {t.begin - pos} bytes before tensor {t.name!r}")
        pos = max(pos, t.end)
    covered = pos
    if covered > data_len:
        probs.add(
            f"tensors need {covered} data bytes but the file has {data_len}: truncated "
            f"(8 + {hlen} + {covered} = {8 + hlen + covered} != file size {size})"
        )
    elif covered < data_len:
        probs.add(
            f"{data_len - covered} bytes after the last tensor "
            f"(8 + {hlen} + {covered} = {8 + hlen + covered} != file size {size})"
        )
    return SafetensorsHeader(
        path, size, hlen, digest, tuple(tensors), tuple(meta), covered, probs.result()
    )


def _tensor(name: str, entry: Any, probs: _Problems) -> TensorInfo | None:
    if not isinstance(entry, dict):
        probs.add(f"tensor {name!r}: entry is not an object")
        return None
    dtype = entry.get("dtype")
    shape = entry.get("shape")
    offs = entry.get("data_offsets")
    if not isinstance(dtype, str):
        probs.add(f"tensor {name!r}: dtype missing")
        return None
    if not isinstance(shape, list) or not all(
        isinstance(d, int) and not isinstance(d, bool) and d >= 0 for d in shape
    ):
        probs.add(f"tensor {name!r}: shape is not a list of non-negative integers")
        return None
    if (
        not isinstance(offs, list)
        or len(offs) != 2
        or not all(isinstance(o, int) and not isinstance(o, bool) and o >= 0 for o in offs)
        or offs[0] > offs[1]
    ):
        probs.add(f"tensor {name!r}: data_offsets is not [begin, end] with begin <= end")
        return None
    t = TensorInfo(name, dtype, tuple(shape), offs[0], offs[1])
    want = t.expected_nbytes
    if want is None:
        probs.add(f"tensor {name!r}: unknown dtype {dtype!r}")
    elif want != t.nbytes:
        probs.add(
            f"tensor {name!r}: {dtype} x {list(shape)} needs {want} bytes, offsets give {t.nbytes}"
        )
    return t


# ---------------------------------------------------------------------------------------------
# model.safetensors.index.json


@dataclass(frozen=True)
class IndexCheck:
    """An index's shard list against the directory (and, optionally, the shard headers)."""

    tensors: int  # entries in weight_map
    shards: tuple[str, ...]  # shard files the index names, sorted
    missing: tuple[str, ...]  # named by the index, absent from the directory
    extra: tuple[str, ...]  # *.safetensors in the directory the index does not name
    total_size: int | None  # metadata.total_size as written
    problems: tuple[str, ...] = ()

    @property
    def ok(self) -> bool:
        return not (self.missing or self.problems)

    def to_dict(self) -> dict[str, Any]:
        return _jsonable(self)


def check_index(
    model_dir_listing: Iterable[str | os.PathLike[str]],
    index_json_text: str | bytes,
    headers: Mapping[str, SafetensorsHeader] | None = None,
) -> IndexCheck:
    """Check `model.safetensors.index.json` against a directory listing (and shard headers)."""
    try:
        return _check_index(model_dir_listing, index_json_text, headers)
    except Exception as exc:  # pragma: no cover - last line of defence
        return IndexCheck(0, (), (), (), None, (f"internal error {type(exc).__name__}: {exc}",))


def _check_index(
    listing: Iterable[str | os.PathLike[str]],
    text: Any,
    headers: Mapping[str, SafetensorsHeader] | None,
) -> IndexCheck:
    probs = _Problems()
    names = set()
    for entry in listing or ():
        try:
            names.add(Path(os.fspath(entry)).name)
        except TypeError:
            probs.add(f"listing entry {entry!r} is not a path")
    if isinstance(text, (bytes, bytearray)):
        text = bytes(text).decode("utf-8", errors="replace")
    try:
        doc = json.loads(text) if isinstance(text, str) else None
    except (ValueError, RecursionError) as exc:
        return IndexCheck(0, (), (), (), None, (f"index is not JSON: {str(exc)[:120]}",))
    if not isinstance(doc, dict):
        return IndexCheck(0, (), (), (), None, ("index is not a JSON object",))
    wm = doc.get("weight_map")
    if not isinstance(wm, dict):
        return IndexCheck(0, (), (), (), None, ("index has no weight_map object",))
    shards: set[str] = set()
    per_shard: dict[str, list[str]] = {}
    for tensor, shard in wm.items():
        if not isinstance(shard, str) or not shard:
            probs.add(f"weight_map[{tensor!r}] is not a file name")
            continue
        if "/" in shard or "\\" in shard or shard in (".", ".."):
            probs.add(f"weight_map[{tensor!r}] = {shard!r} is not a plain file name")
        shards.add(shard)
        per_shard.setdefault(shard, []).append(tensor)
    total = None
    meta = doc.get("metadata")
    if isinstance(meta, dict) and "total_size" in meta:
        ts = meta.get("total_size")
        number = isinstance(ts, (int, float)) and not isinstance(ts, bool)
        if isinstance(ts, (int, float, str)) and (number or str(ts).isdigit()):
            total = int(ts)
        else:
            probs.add(f"metadata.total_size {ts!r} is not a number")
    missing = tuple(sorted(s for s in shards if Path(s).name not in names))
    listed = {Path(s).name for s in shards}
    extra = tuple(sorted(n for n in names if n.endswith(".safetensors") and n not in listed))
    if headers is not None:
        data_total = 0
        for shard, tensors in per_shard.items():
            h = headers.get(shard)
            if h is None:
                continue
            data_total += h.data_size
            have = {t.name for t in h.tensors}
            absent = [t for t in tensors if t not in have]
            if absent:
                probs.add(
                    f"{shard}: {len(absent)} tensor(s) the index maps there are not in its "
                    f"header, e.g. {absent[0]!r}"
                )
            mapped = set(tensors)
            stray = [n for n in have if n not in mapped]
            if stray:
                probs.add(
                    f"{shard}: {len(stray)} tensor(s) in the header are not mapped to it, "
                    f"e.g. {stray[0]!r}"
                )
        complete = not missing and all(s in headers for s in shards)
        if total is not None and complete and total != data_total:
            probs.add(f"metadata.total_size {total} != sum of shard data sizes {data_total}")
    return IndexCheck(len(wm), tuple(sorted(shards)), missing, extra, total, probs.result())


# ---------------------------------------------------------------------------------------------
# sampled block hashes and manifests


def _offsets(size: int, block_size: int, samples: int) -> list[int]:
    if size <= 0 or block_size <= 0 or samples <= 0:
        return []
    last = max(0, size - block_size)
    if samples == 1 or last == 0:
        return [0]
    return sorted({(i * last) // (samples - 1) for i in range(samples)})


def _sample(path: str, block_size: int, samples: int) -> tuple[list[tuple[int, str]], int]:
    """(offset, sha256) of sampled blocks and bytes read; raises OSError."""
    size = os.stat(path).st_size
    out: list[tuple[int, str]] = []
    read = 0
    with open_regular(path) as f:
        for off in _offsets(size, block_size, samples):
            f.seek(off)
            h = hashlib.sha256()
            left = block_size
            while left > 0:
                b = f.read(min(left, _CHUNK))
                if not b:
                    break
                h.update(b)
                left -= len(b)
                read += len(b)
            out.append((off, h.hexdigest()))
    return out, read


def sample_blocks(
    path: str | os.PathLike[str], block_size: int = 1024 * 1024, samples: int = 8
) -> list[tuple[int, str]]:
    """sha256 of `samples` blocks at fixed positions (first, last, evenly between); [] on error."""
    try:
        return _sample(os.fspath(path), int(block_size), int(samples))[0]
    except (OSError, ValueError):
        return []


def _full_hash(path: str, progress: ByteProgress | None = None) -> tuple[str, int]:
    h = hashlib.sha256()
    n = 0
    with open_regular(path) as f:
        while True:
            b = f.read(4 * _CHUNK)
            if not b:
                break
            h.update(b)
            n += len(b)
            if progress:
                progress(len(b))
    return h.hexdigest(), n


def _model_files(model_dir: Path) -> list[Path]:
    """Regular files under model_dir (hidden entries skipped, dir symlinks not followed)."""
    out: list[Path] = []
    for root, dirs, files in os.walk(model_dir, followlinks=False):
        dirs[:] = sorted(d for d in dirs if not d.startswith("."))
        for name in sorted(files):
            if name.startswith("."):
                continue
            p = Path(root) / name
            if p.is_file():
                out.append(p)
    return out


def write_manifest(
    model_dir: str | os.PathLike[str],
    block_size: int = 1024 * 1024,
    samples: int = 8,
    full: bool = False,
    progress: ByteProgress | None = None,
) -> dict[str, Any]:
    """Manifest of a model directory: sizes, safetensors header hashes, sampled block hashes.

    PROGRESS (see ascend_audit.progress) is fed the bytes of each full hash as they are read."""
    t0 = time.perf_counter()
    base = Path(model_dir)
    files: dict[str, Any] = {}
    problems: list[str] = []
    total = read = 0
    if not base.is_dir():
        problems.append(f"{base} is not a directory")
    for p in _model_files(base) if base.is_dir() else []:
        rel = p.relative_to(base).as_posix()
        try:
            entry: dict[str, Any] = {"size": p.stat().st_size}
            total += entry["size"]
            if p.name.endswith(".safetensors"):
                h = read_safetensors_header(p)
                entry["header_sha256"] = h.header_sha256
                entry["header_len"] = h.header_len
                read += 8 + (h.header_len or 0) if h.header_sha256 else 0
                if h.problems:
                    problems.extend(f"{rel}: {m}" for m in h.problems[:5])
            blocks, n = _sample(str(p), block_size, samples)
            read += n
            entry["blocks"] = [[o, d] for o, d in blocks]
            if full:
                entry["sha256"], n = _full_hash(str(p), progress)
                read += n
        except OSError as exc:
            problems.append(f"{rel}: cannot read: {exc.strerror or exc}")
            continue
        files[rel] = entry
    secs = time.perf_counter() - t0
    return {
        "version": MANIFEST_VERSION,
        "algorithm": "sha256",
        "block_size": block_size,
        "samples": samples,
        "full": full,
        "files": files,
        "total_bytes": total,
        "bytes_read": read,
        "seconds": round(secs, 6),
        "throughput_bytes_per_s": round(read / secs, 1) if secs > 0 else None,
        "problems": problems,
    }


@dataclass(frozen=True)
class ManifestCheck:
    """Result of checking a model directory against a manifest."""

    files_checked: int
    missing: tuple[str, ...]
    extra: tuple[str, ...]
    mismatched: tuple[str, ...]
    findings: tuple[str, ...]  # every difference, one line each
    bytes_read: int
    seconds: float
    throughput_bytes_per_s: float | None
    problems: tuple[str, ...] = ()  # manifest unreadable, files unreadable

    @property
    def ok(self) -> bool:
        return not (self.findings or self.problems)

    def to_dict(self) -> dict[str, Any]:
        return _jsonable(self)


def verify_manifest(
    model_dir: str | os.PathLike[str],
    manifest: Mapping[str, Any],
    progress: ByteProgress | None = None,
) -> ManifestCheck:
    """Compare a model directory with a manifest from write_manifest; never raises.

    PROGRESS (see ascend_audit.progress) is fed the bytes of each full hash as they are read."""
    t0 = time.perf_counter()
    try:
        return _verify(Path(model_dir), manifest, t0, progress)
    except Exception as exc:  # pragma: no cover - last line of defence
        secs = time.perf_counter() - t0
        msg = f"internal error {type(exc).__name__}: {exc}"[:300]
        return ManifestCheck(0, (), (), (), (), 0, secs, None, (msg,))


def _verify(
    base: Path, manifest: Any, t0: float, progress: ByteProgress | None = None
) -> ManifestCheck:
    findings = _Problems()
    probs = _Problems()
    files = manifest.get("files") if isinstance(manifest, Mapping) else None
    if not isinstance(files, Mapping):
        return ManifestCheck(0, (), (), (), (), 0, 0.0, None, ("manifest has no files mapping",))
    if manifest.get("version") != MANIFEST_VERSION:
        probs.add(f"manifest version {manifest.get('version')!r}, expected {MANIFEST_VERSION}")
    bs = manifest.get("block_size")
    ns = manifest.get("samples")
    block_size = bs if isinstance(bs, int) and not isinstance(bs, bool) and bs > 0 else 1 << 20
    samples = ns if isinstance(ns, int) and not isinstance(ns, bool) and ns > 0 else 8
    missing: list[str] = []
    mismatched: list[str] = []
    read = checked = 0
    for rel, want in files.items():
        if not isinstance(rel, str) or not isinstance(want, Mapping):
            probs.add(f"manifest entry {str(rel)[:80]!r} is malformed")
            continue
        p = base / rel
        if ".." in Path(rel).parts or Path(rel).is_absolute():
            probs.add(f"manifest entry {rel!r} escapes the model directory")
            continue
        if not p.is_file():
            missing.append(rel)
            findings.add(f"{rel}: missing")
            continue
        checked += 1
        bad = False
        try:
            size = p.stat().st_size
            if want.get("size") != size:
                findings.add(f"{rel}: size {size}, manifest says {want.get('size')}")
                bad = True
            if "header_sha256" in want:
                h = read_safetensors_header(p)
                read += 8 + (h.header_len or 0) if h.header_sha256 else 0
                if h.header_sha256 != want.get("header_sha256"):
                    findings.add(f"{rel}: safetensors header differs from the manifest")
                    bad = True
                for m in h.problems[:3]:
                    findings.add(f"{rel}: {m}")
                    bad = True
            want_blocks = want.get("blocks")
            if isinstance(want_blocks, list):
                got, n = _sample(str(p), block_size, samples)
                read += n
                got_map = dict(got)
                for item in want_blocks:
                    if not (isinstance(item, (list, tuple)) and len(item) == 2):
                        probs.add(f"{rel}: malformed block entry")
                        continue
                    off, digest = item
                    if got_map.get(off) != digest:
                        findings.add(f"{rel}: block at offset {off} differs")
                        bad = True
                        break
            if isinstance(want.get("sha256"), str):
                digest, n = _full_hash(str(p), progress)
                read += n
                if digest != want["sha256"]:
                    findings.add(f"{rel}: full sha256 differs")
                    bad = True
        except OSError as exc:
            probs.add(f"{rel}: cannot read: {exc.strerror or exc}")
            bad = True
        if bad:
            mismatched.append(rel)
    known = set(files)
    extra = []
    if base.is_dir():
        for p in _model_files(base):
            rel = p.relative_to(base).as_posix()
            if rel not in known:
                extra.append(rel)
                findings.add(f"{rel}: not in the manifest")
    else:
        probs.add(f"{base} is not a directory")
    secs = time.perf_counter() - t0
    return ManifestCheck(
        checked,
        tuple(missing),
        tuple(extra),
        tuple(mismatched),
        findings.result(),
        read,
        secs,
        (read / secs) if secs > 0 else None,
        probs.result(),
    )
