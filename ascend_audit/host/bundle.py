"""The bundle format `ascend-audit collect` writes: its manifest, and the checks that refuse a
bundle that could escape, explode or lie before anything replays it."""

from __future__ import annotations

import errno
import json
import os
import posixpath
import stat
import tarfile
from collections.abc import Callable
from typing import Any

from ascend_audit import __version__
from ascend_audit.host.base import ProcessInfo, StatInfo
from ascend_audit.host.procscan import ProcessGap
from ascend_audit.host.tarscan import TarScanError, scan_tar
from ascend_audit.safe_io import NotRegularFile, open_in_root, read_bytes

FORMAT = "ascend-audit-snapshot"
FORMAT_VERSION = 1
MANIFEST = "manifest.json"
MAX_BUNDLE_BYTES = 8 * 1024**3  # unpacked size refused beyond this (a decompression bomb)
MAX_RATIO = 200  # unpacked / packed, for bundles over 64 MiB unpacked
NOT_RECORDED = "not recorded in the snapshot"
MEMBER_CAP = 512 * 1024**2  # bytes of one recorded answer read back
MAX_MANIFEST_BYTES = 256 * 1024**2


class SnapshotError(Exception):
    """A bundle that cannot be trusted or read; the message says why."""


def _safe_member_name(name: str) -> bool:
    if name.startswith("/") or "\\" in name:
        return False
    parts = name.split("/")
    return ".." not in parts


def extract_bundle(path: str, dest: str) -> None:
    """Unpack a .tar.gz bundle into dest, refusing anything that could escape or explode."""
    try:
        scan_tar(path, MAX_BUNDLE_BYTES)  # bounded: before tarfile reads any header whole
    except TarScanError as exc:
        raise SnapshotError(f"{path}: refused: {exc}") from None
    try:
        packed = os.path.getsize(path)
        tf = tarfile.open(path, "r:*")  # noqa: SIM115 - closed by the `with` below
        members = tf.getmembers()
    except (OSError, tarfile.TarError, EOFError) as exc:
        raise SnapshotError(f"{path}: not a readable snapshot bundle ({exc})") from None
    with tf:
        total = 0
        seen: set[str] = set()
        for m in members:
            norm = posixpath.normpath(m.name)
            if norm in seen:
                raise SnapshotError(f"{path}: refused: member {m.name!r} appears twice")
            seen.add(norm)
            if not _safe_member_name(m.name):
                raise SnapshotError(f"{path}: refused: member {m.name!r} points outside the bundle")
            if not (m.isfile() or m.isdir()):
                raise SnapshotError(
                    f"{path}: refused: member {m.name!r} is a link or device file; "
                    "bundles hold only plain files"
                )
            total += m.size
        if total > MAX_BUNDLE_BYTES or (total > 64 * 1024**2 and total > MAX_RATIO * packed):
            raise SnapshotError(
                f"{path}: refused: unpacks to {total} bytes from {packed} "
                f"(limit {MAX_BUNDLE_BYTES} bytes, ratio {MAX_RATIO}); looks like a bomb"
            )
        for m in members:
            target = os.path.join(dest, m.name)
            if m.isdir():
                os.makedirs(target, exist_ok=True)
                continue
            os.makedirs(os.path.dirname(target), exist_ok=True)
            src = tf.extractfile(m)
            if src is None:
                continue
            with src, open(target, "wb") as out:
                written = 0
                while chunk := src.read(1 << 20):
                    written += len(chunk)
                    if written > m.size:
                        raise SnapshotError(f"{path}: refused: {m.name!r} is larger than declared")
                    out.write(chunk)


def load_manifest(root: str, origin: str) -> dict[str, Any]:
    """Read and validate a bundle's manifest; refuse newer formats and lying manifests."""
    try:
        raw = read_bytes(root, MANIFEST, MAX_MANIFEST_BYTES, links=False)
    except FileNotFoundError:
        raise SnapshotError(f"{origin}: no {MANIFEST}: not an ascend-audit snapshot") from None
    except OSError as exc:
        raise SnapshotError(f"{origin}: {MANIFEST} cannot be read ({exc.strerror})") from None
    if len(raw) > MAX_MANIFEST_BYTES:
        raise SnapshotError(f"{origin}: {MANIFEST} is larger than {MAX_MANIFEST_BYTES} bytes")
    try:
        manifest = json.loads(raw.decode("utf-8"))
    except RecursionError:
        raise SnapshotError(f"{origin}: {MANIFEST} is nested too deeply to be a manifest") from None
    except ValueError as exc:
        raise SnapshotError(f"{origin}: {MANIFEST} is not valid JSON ({exc})") from None
    try:
        json.dumps(manifest, ensure_ascii=False).encode("utf-8")
    except UnicodeEncodeError:
        raise SnapshotError(
            f"{origin}: {MANIFEST} holds a lone surrogate (\\udXXX), not text; "
            "the bundle is damaged"
        ) from None
    except (RecursionError, ValueError):
        raise SnapshotError(f"{origin}: {MANIFEST} is nested too deeply to be a manifest") from None
    if not isinstance(manifest, dict) or manifest.get("format") != FORMAT:
        raise SnapshotError(f"{origin}: {MANIFEST} is not an ascend-audit snapshot manifest")
    version = manifest.get("format_version")
    if not isinstance(version, int):
        raise SnapshotError(f"{origin}: format_version missing or not an integer")
    if version > FORMAT_VERSION:
        raise SnapshotError(
            f"{origin}: snapshot format {version} is newer than this ascend-audit understands "
            f"({FORMAT_VERSION}); upgrade ascend-audit {__version__} to replay it"
        )
    _check_shape(manifest, origin)
    for rel in _referenced_files(manifest):
        if not _safe_member_name(rel):
            raise SnapshotError(f"{origin}: manifest refers to {rel!r} outside the bundle")
        inputs = (manifest.get("inputs") or {}).values()
        why = _member_problem(root, rel, dir_ok=rel in inputs)
        if why:
            raise SnapshotError(f"{origin}: manifest lists {rel!r}, which {why}")
    return manifest


def _member_problem(root: str, rel: str, dir_ok: bool) -> str | None:
    """Why a bundle member is not a plain file (or, for inputs, a folder of plain files)
    reached without any symlink, or None."""
    try:
        fd = open_in_root(root, rel, links=False)
    except NotRegularFile:
        return "the bundle does not hold as a plain file"
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            return "the bundle does not hold as a plain file: a symbolic link is on its path"
        return "the bundle does not hold"
    try:
        mode = os.fstat(fd).st_mode
    finally:
        os.close(fd)
    if stat.S_ISREG(mode):
        return None
    if not (dir_ok and stat.S_ISDIR(mode)):
        return "the bundle does not hold as a plain file"
    for dirpath, dirnames, filenames in os.walk(os.path.join(root, rel), followlinks=False):
        for name in dirnames + filenames:
            st = os.lstat(os.path.join(dirpath, name))
            if not (stat.S_ISREG(st.st_mode) or stat.S_ISDIR(st.st_mode)):
                inner = os.path.relpath(os.path.join(dirpath, name), root)
                return f"holds {inner!r}, a link or special file (bundles hold plain files only)"
    return None


def _is_str_or_none(v: Any) -> bool:
    return v is None or isinstance(v, str)


class _Damaged(Exception):
    """One section of a manifest has the wrong shape: (where, what)."""


def _check_shape(m: dict[str, Any], origin: str) -> None:
    """Refuse a manifest whose sections have the wrong shape, before anything replays it."""
    try:
        for check in _SECTION_CHECKS:
            check(m)
    except _Damaged as exc:
        where, what = exc.args
        damaged = f"{origin}: {MANIFEST}: {where} {what}; the bundle is damaged"
        raise SnapshotError(damaged) from None


def _mapping(m: dict[str, Any], key: str) -> dict[str, Any]:
    v = m.get(key)
    if v is None:
        return {}
    if not isinstance(v, dict):
        raise _Damaged(key, "is not an object")
    return v


def _listing(m: dict[str, Any], key: str) -> list[Any]:
    v = m.get(key)
    if v is not None and not isinstance(v, list):
        raise _Damaged(key, "is not a list")
    return v or []


def _records(m: dict[str, Any], key: str, parse: Callable[[Any], Any], what: str) -> None:
    """Each item of the list `key` must parse as a record (ProcessInfo, ProcessGap …)."""
    for i, item in enumerate(_listing(m, key)):
        try:
            parse(item)
        except (KeyError, TypeError, ValueError, AttributeError):
            raise _Damaged(f"{key}[{i}]", f"is not a {what}") from None


def _check_commands(m: dict[str, Any]) -> None:
    for i, c in enumerate(_listing(m, "commands")):
        if not isinstance(c, dict):
            raise _Damaged(f"commands[{i}]", "is not an object")
        argv = c.get("argv")
        if not isinstance(argv, list) or not all(isinstance(a, str) for a in argv):
            raise _Damaged(f"commands[{i}].argv", "is not a list of strings")
        for k in ("stdout", "stderr", "status", "error"):
            if not _is_str_or_none(c.get(k)):
                raise _Damaged(f"commands[{i}].{k}", "is not a string")
        notes = c.get("notes")
        if notes is not None and not (
            isinstance(notes, list) and all(isinstance(n, str) for n in notes)
        ):
            raise _Damaged(f"commands[{i}].notes", "is not a list of strings")
        if c.get("rc") is not None and type(c.get("rc")) is not int:
            raise _Damaged(f"commands[{i}].rc", "is not an integer")
        if c.get("duration_ms") is not None and type(c["duration_ms"]) not in (int, float):
            raise _Damaged(f"commands[{i}].duration_ms", "is not a number")


def _check_files(m: dict[str, Any]) -> None:
    for path, f in _mapping(m, "files").items():
        if not isinstance(f, dict) or not _is_str_or_none(f.get("content")):
            raise _Damaged(f"files[{path!r}]", "is not a file record")
        if not _is_str_or_none(f.get("error")):
            raise _Damaged(f"files[{path!r}].error", "is not a string")
    for path, entries in _mapping(m, "dirs").items():
        if entries is not None and not (
            isinstance(entries, list) and all(isinstance(e, str) for e in entries)
        ):
            raise _Damaged(f"dirs[{path!r}]", "is not a list of names")


def _check_strings(m: dict[str, Any]) -> None:
    for key in ("links", "realpaths", "which", "inputs", "env", "identity"):
        for k, v in _mapping(m, key).items():
            if not _is_str_or_none(v) or (key in ("realpaths", "env", "identity") and v is None):
                raise _Damaged(f"{key}[{k!r}]", "is not a string")
    if not _is_str_or_none(m.get("policy")) or not isinstance(m.get("sysroot", "/"), str):
        raise _Damaged("policy/sysroot", "is not a string")


def _check_stats(m: dict[str, Any]) -> None:
    for key in ("stats", "lstats"):
        for path, st in _mapping(m, key).items():
            try:
                if st is not None:
                    StatInfo.from_dict(st)
            except (KeyError, TypeError, ValueError, AttributeError):
                raise _Damaged(f"{key}[{path!r}]", "is not a stat record") from None


def _check_processes(m: dict[str, Any]) -> None:
    _records(m, "processes", ProcessInfo.from_dict, "process record")
    _records(m, "process_gaps", ProcessGap.from_dict, "process gap record")


def _check_udev(m: dict[str, Any]) -> None:
    for sub, devs in _mapping(m, "udev").items():
        if devs is not None and not (
            isinstance(devs, list) and all(isinstance(d, dict) for d in devs)
        ):
            raise _Damaged(f"udev[{sub!r}]", "is not a list of devices")
    _mapping(m, "cached_facts")


_SECTION_CHECKS: tuple[Callable[[dict[str, Any]], None], ...] = (
    _check_commands,
    _check_files,
    _check_strings,
    _check_stats,
    _check_processes,
    _check_udev,
)


def _referenced_files(manifest: dict[str, Any]) -> list[str]:
    refs: list[str] = []
    for c in manifest.get("commands") or []:
        refs += [c[k] for k in ("stdout", "stderr") if isinstance(c, dict) and c.get(k)]
    for f in (manifest.get("files") or {}).values():
        if isinstance(f, dict) and f.get("content"):
            refs.append(f["content"])
    refs += [v for v in (manifest.get("inputs") or {}).values() if isinstance(v, str)]
    if isinstance(manifest.get("policy"), str):
        refs.append(manifest["policy"])
    return refs


def bundle_dir_problem(out: str) -> str | None:
    """Why a directory bundle must not be written at `out` (a link, a file, a folder holding
    something else than a bundle), or None; an earlier bundle there is replaced whole."""
    if os.path.islink(out):
        return f"{out} is a symbolic link; refusing to write through it"
    if not os.path.exists(out):
        return None
    if not os.path.isdir(out):
        return f"{out} exists and is not a directory (name a bundle NAME.tar.gz, or a directory)"
    entries = os.listdir(out)
    if entries and MANIFEST not in entries:
        return f"{out} holds other files; a directory bundle needs an empty or new directory"
    return None
