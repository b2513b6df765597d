"""Record and replay: a bundle holds every answer the checks asked the node for."""

from __future__ import annotations

import errno
import json
import os
import posixpath
import shutil
import stat
import tarfile
import tempfile
import threading
import time
from collections.abc import Callable, Sequence
from typing import Any

from ascend_audit import __version__
from ascend_audit.host.base import (
    FILE_CAP,
    CommandResult,
    FileRead,
    Host,
    ProcessIdentity,
    ProcessInfo,
    StatInfo,
)
from ascend_audit.host.procscan import ProcessGap
from ascend_audit.host.tarscan import TarScanError, scan_tar
from ascend_audit.redact import redact_text
from ascend_audit.safe_io import NotRegularFile, kind_of, open_in_root, open_regular, read_bytes
from ascend_audit.safe_write import publish_dir, staging_dir, write_stream

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


def _check_shape(m: dict[str, Any], origin: str) -> None:
    """Refuse a manifest whose sections have the wrong shape, before anything replays it."""

    def bad(where: str, what: str) -> SnapshotError:
        return SnapshotError(f"{origin}: {MANIFEST}: {where} {what}; the bundle is damaged")

    def mapping(key: str) -> dict[str, Any]:
        v = m.get(key)
        if v is None:
            return {}
        if not isinstance(v, dict):
            raise bad(key, "is not an object")
        return v

    commands = m.get("commands")
    if commands is not None and not isinstance(commands, list):
        raise bad("commands", "is not a list")
    for i, c in enumerate(commands or []):
        if not isinstance(c, dict):
            raise bad(f"commands[{i}]", "is not an object")
        argv = c.get("argv")
        if not isinstance(argv, list) or not all(isinstance(a, str) for a in argv):
            raise bad(f"commands[{i}].argv", "is not a list of strings")
        for k in ("stdout", "stderr", "status", "error"):
            if not _is_str_or_none(c.get(k)):
                raise bad(f"commands[{i}].{k}", "is not a string")
        if c.get("rc") is not None and type(c.get("rc")) is not int:
            raise bad(f"commands[{i}].rc", "is not an integer")
        if c.get("duration_ms") is not None and type(c["duration_ms"]) not in (int, float):
            raise bad(f"commands[{i}].duration_ms", "is not a number")
    for path, f in mapping("files").items():
        if not isinstance(f, dict) or not _is_str_or_none(f.get("content")):
            raise bad(f"files[{path!r}]", "is not a file record")
        if not _is_str_or_none(f.get("error")):
            raise bad(f"files[{path!r}].error", "is not a string")
    for path, entries in mapping("dirs").items():
        if entries is not None and not (
            isinstance(entries, list) and all(isinstance(e, str) for e in entries)
        ):
            raise bad(f"dirs[{path!r}]", "is not a list of names")
    for key in ("links", "realpaths", "which", "inputs", "env", "identity"):
        for k, v in mapping(key).items():
            if not _is_str_or_none(v) or (key in ("realpaths", "env", "identity") and v is None):
                raise bad(f"{key}[{k!r}]", "is not a string")
    for key in ("stats", "lstats"):
        for path, st in mapping(key).items():
            try:
                if st is not None:
                    StatInfo.from_dict(st)
            except (KeyError, TypeError, ValueError, AttributeError):
                raise bad(f"{key}[{path!r}]", "is not a stat record") from None
    procs = m.get("processes")
    if procs is not None and not isinstance(procs, list):
        raise bad("processes", "is not a list")
    for i, p in enumerate(procs or []):
        try:
            ProcessInfo.from_dict(p)
        except (KeyError, TypeError, ValueError, AttributeError):
            raise bad(f"processes[{i}]", "is not a process record") from None
    gaps = m.get("process_gaps")
    if gaps is not None and not isinstance(gaps, list):
        raise bad("process_gaps", "is not a list")
    for i, g in enumerate(gaps or []):
        try:
            ProcessGap.from_dict(g)
        except (KeyError, TypeError, ValueError, AttributeError):
            raise bad(f"process_gaps[{i}]", "is not a process gap record") from None
    for sub, devs in mapping("udev").items():
        if devs is not None and not (
            isinstance(devs, list) and all(isinstance(d, dict) for d in devs)
        ):
            raise bad(f"udev[{sub!r}]", "is not a list of devices")
    mapping("cached_facts")
    if not _is_str_or_none(m.get("policy")) or not isinstance(m.get("sysroot", "/"), str):
        raise bad("policy/sysroot", "is not a string")


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


class SnapshotHost(Host):
    """Replays a bundle written by `ascend-audit collect`; unrecorded questions say so."""

    kind = "snapshot"

    def __init__(self, bundle: str) -> None:
        self.bundle = bundle
        self._tmp: str | None = None
        if os.path.isdir(bundle):
            self.root = bundle
        elif os.path.isfile(bundle):
            self._tmp = tempfile.mkdtemp(prefix="ascend-audit-snap-")
            try:
                extract_bundle(bundle, self._tmp)
            except BaseException:
                self.close()
                raise
            self.root = self._tmp
        else:
            raise SnapshotError(f"{bundle}: no such snapshot file or directory")
        try:
            self.manifest = load_manifest(self.root, bundle)
        except BaseException:
            self.close()
            raise
        m = self.manifest
        self.sysroot = m.get("sysroot", "/")
        self._commands = {tuple(c["argv"]): c for c in m.get("commands") or []}

    def policy_text(self) -> str | None:
        """The policy the bundle was collected with, if it carries one."""
        rel = self.manifest.get("policy")
        return self._read_member(rel) if rel else None

    def close(self) -> None:
        if self._tmp:
            shutil.rmtree(self._tmp, ignore_errors=True)
            self._tmp = None

    def _read_member(self, rel: str | None) -> str:
        if not rel:
            return ""
        try:
            data = read_bytes(self.root, rel, MEMBER_CAP, links=False)
        except OSError as exc:
            raise SnapshotError(f"{self.bundle}: {rel}: {exc.strerror}") from None
        return data[:MEMBER_CAP].decode("utf-8", errors="replace")

    def run_many(
        self, argvs: Sequence[Sequence[str]], timeout: float | None = None
    ) -> list[CommandResult]:
        out = []
        for argv in argvs:
            rec = self._commands.get(tuple(argv))
            if rec is None:
                out.append(CommandResult(tuple(argv), "missing", error=NOT_RECORDED))
                continue
            out.append(
                CommandResult(
                    tuple(rec["argv"]),
                    rec.get("status", "error"),
                    rec.get("rc"),
                    self._read_member(rec.get("stdout")),
                    self._read_member(rec.get("stderr")),
                    float(rec.get("duration_ms") or 0.0),
                    bool(rec.get("truncated")),
                    rec.get("error") or "",
                )
            )
        return out

    def read_text(self, path: str, limit: int = FILE_CAP) -> FileRead:
        rec = (self.manifest.get("files") or {}).get(path)
        if rec is None:
            return FileRead(path, None, NOT_RECORDED)
        if rec.get("content") is None:
            return FileRead(path, None, rec.get("error") or "unreadable")
        text = self._read_member(rec["content"])
        return FileRead(path, text[:limit], None, bool(rec.get("truncated")) or len(text) > limit)

    def listdir(self, path: str) -> list[str] | None:
        entries = (self.manifest.get("dirs") or {}).get(path)
        return list(entries) if entries is not None else None

    def realpath(self, path: str) -> str:
        return (self.manifest.get("realpaths") or {}).get(path, posixpath.normpath(path))

    def readlink(self, path: str) -> str | None:
        return (self.manifest.get("links") or {}).get(path)

    def stat(self, path: str) -> StatInfo | None:
        rec = (self.manifest.get("stats") or {}).get(path)
        return StatInfo.from_dict(rec) if rec else None

    def lstat(self, path: str) -> StatInfo | None:
        if "lstats" in self.manifest:
            rec = (self.manifest.get("lstats") or {}).get(path)
            return StatInfo.from_dict(rec) if rec else None
        # A bundle older than lstat records: a recorded link stands as root's (it replays the
        # probe's recorded answer; nothing is run), anything else as its stat.
        if self.readlink(path) is not None:
            return StatInfo(0o120777, 0, 0, "root", "root", "link")
        return self.stat(path)

    def env(self) -> dict[str, str]:
        return dict(self.manifest.get("env") or {})

    def identity(self) -> dict[str, str]:
        return dict(self.manifest.get("identity") or {})

    def processes(self) -> list[ProcessInfo]:
        return [ProcessInfo.from_dict(p) for p in self.manifest.get("processes") or []]

    def process_gaps(self) -> list[ProcessGap]:
        return [ProcessGap.from_dict(g) for g in self.manifest.get("process_gaps") or []]

    def udev(self, subsystem: str) -> list[dict[str, Any]] | None:
        return (self.manifest.get("udev") or {}).get(subsystem)

    def process_identity(self, pid: int) -> ProcessIdentity | None:
        rec = (self.manifest.get("process_identities") or {}).get(str(pid))
        try:
            return ProcessIdentity.from_dict(rec) if isinstance(rec, dict) else None
        except (KeyError, TypeError, ValueError):
            return None

    def which(self, command: str) -> str | None:
        return (self.manifest.get("which") or {}).get(command)

    def input_path(self, path: str) -> str | None:
        rel = (self.manifest.get("inputs") or {}).get(path)
        return os.path.join(self.root, rel) if rel else None

    def cached_fact(self, name: str, compute: Callable[[], Any]) -> Any:
        return (self.manifest.get("cached_facts") or {}).get(name)


class RecordingHost(Host):
    """Wraps a live host and remembers every answer, to be written as a bundle."""

    kind = "recording"

    def __init__(self, inner: Host) -> None:
        self.inner = inner
        self.sysroot = inner.sysroot
        self._lock = threading.Lock()
        self.commands: dict[tuple[str, ...], CommandResult] = {}
        self.files: dict[str, FileRead] = {}
        self.dirs: dict[str, list[str] | None] = {}
        self.links: dict[str, str | None] = {}
        self.realpaths: dict[str, str] = {}
        self.stats: dict[str, StatInfo | None] = {}
        self.lstats: dict[str, StatInfo | None] = {}
        self.whiches: dict[str, str | None] = {}
        self.udevs: dict[str, list[dict[str, Any]] | None] = {}
        self.inputs: dict[str, str | None] = {}
        self._env: dict[str, str] | None = None
        self._identity: dict[str, str] | None = None
        self._processes: list[ProcessInfo] | None = None
        self._process_gaps: list[ProcessGap] = []
        self.cached: dict[str, Any] = {}
        self.identities: dict[int, ProcessIdentity | None] = {}

    def run_many(
        self, argvs: Sequence[Sequence[str]], timeout: float | None = None
    ) -> list[CommandResult]:
        results = self.inner.run_many(argvs, timeout)
        with self._lock:
            for argv, res in zip(argvs, results):
                self.commands[tuple(argv)] = res
        return results

    def run_as(
        self,
        argv: list[str] | tuple[str, ...],
        timeout: float,
        identity: ProcessIdentity | None,
        extra_env: dict[str, str] | None = None,
    ) -> CommandResult:
        res = self.inner.run_as(argv, timeout, identity, extra_env)
        with self._lock:
            self.commands[tuple(argv)] = res
        return res

    def process_identity(self, pid: int) -> ProcessIdentity | None:
        res = self.inner.process_identity(pid)
        with self._lock:
            self.identities[pid] = res
        return res

    def read_text(self, path: str, limit: int = FILE_CAP) -> FileRead:
        res = self.inner.read_text(path, limit)
        with self._lock:
            self.files[path] = res
        return res

    def listdir(self, path: str) -> list[str] | None:
        res = self.inner.listdir(path)
        with self._lock:
            self.dirs[path] = res
        return res

    def realpath(self, path: str) -> str:
        res = self.inner.realpath(path)
        with self._lock:
            self.realpaths[path] = res
        return res

    def readlink(self, path: str) -> str | None:
        res = self.inner.readlink(path)
        with self._lock:
            self.links[path] = res
        return res

    def stat(self, path: str) -> StatInfo | None:
        res = self.inner.stat(path)
        with self._lock:
            self.stats[path] = res
        return res

    def lstat(self, path: str) -> StatInfo | None:
        res = self.inner.lstat(path)
        with self._lock:
            self.lstats[path] = res
        return res

    def env(self) -> dict[str, str]:
        if self._env is None:
            self._env = self.inner.env()
        return dict(self._env)

    def identity(self) -> dict[str, str]:
        if self._identity is None:
            self._identity = self.inner.identity()
        return dict(self._identity)

    def processes(self) -> list[ProcessInfo]:
        if self._processes is None:
            self._processes = self.inner.processes()
            self._process_gaps = self.inner.process_gaps()
        return list(self._processes)

    def process_gaps(self) -> list[ProcessGap]:
        return list(self._process_gaps)

    def udev(self, subsystem: str) -> list[dict[str, Any]] | None:
        res = self.inner.udev(subsystem)
        with self._lock:
            self.udevs[subsystem] = res
        return res

    def which(self, command: str) -> str | None:
        res = self.inner.which(command)
        with self._lock:
            self.whiches[command] = res
        return res

    def input_path(self, path: str) -> str | None:
        res = self.inner.input_path(path)
        with self._lock:
            self.inputs[path] = res
        return res

    def cached_fact(self, name: str, compute: Callable[[], Any]) -> Any:
        res = self.inner.cached_fact(name, compute)
        with self._lock:
            self.cached[name] = res
        return res

    # writing -----------------------------------------------------------------------------
    def write_bundle(
        self,
        out: str,
        tool: dict[str, str],
        run_inputs: dict[str, Any] | None = None,
        policy_path: str | None = None,
    ) -> str:
        """Write everything recorded to `out` (.tar.gz/.tgz → tarball, else a directory)."""
        as_tar = out.endswith((".tar.gz", ".tgz"))
        staging = tempfile.mkdtemp(prefix="ascend-audit-collect-") if as_tar else staging_dir(out)
        try:
            manifest = self._materialise(staging, tool)
            manifest["run_inputs"] = run_inputs or {}
            if policy_path:
                _copy_redacted(policy_path, os.path.join(staging, "policy.toml"))
                manifest["policy"] = "policy.toml"
            with open(os.path.join(staging, MANIFEST), "w", encoding="utf-8") as fh:
                json.dump(manifest, fh, indent=1, sort_keys=True)
                fh.write("\n")
            if as_tar:
                write_stream(out, lambda fh: _tar_into(staging, fh))
            else:
                publish_dir(staging, out, replaceable=bundle_dir_problem(out) is None)
                staging = ""
        finally:
            if staging:
                shutil.rmtree(staging, ignore_errors=True)
        return out

    def _materialise(self, root: str, tool: dict[str, str]) -> dict[str, Any]:
        def put(rel: str, text: str) -> str:
            full = os.path.join(root, rel)
            os.makedirs(os.path.dirname(full), exist_ok=True)
            with open(full, "w", encoding="utf-8", errors="replace") as fh:
                fh.write(redact_text(text))  # a bundle is attached to tickets
            return rel

        commands = []
        for i, (argv, res) in enumerate(sorted(self.commands.items())):
            rec = res.to_dict()
            rec["argv"] = list(argv)
            rec["stdout"] = put(f"commands/{i:04d}.out", res.stdout) if res.stdout else None
            rec["stderr"] = put(f"commands/{i:04d}.err", res.stderr) if res.stderr else None
            commands.append(rec)
        files: dict[str, Any] = {}
        for path, fr in sorted(self.files.items()):
            if fr.text is None:
                files[path] = {"content": None, "error": fr.error}
            else:
                rel = "files/" + path.lstrip("/")
                files[path] = {"content": put(rel, fr.text), "truncated": fr.truncated}
        inputs: dict[str, str | None] = {}
        notes: dict[str, list[str]] = {}
        for i, (orig, local) in enumerate(sorted(self.inputs.items())):
            notes[orig] = []
            copied = _copy_input(local, root, f"inputs/{i:03d}", notes[orig]) if local else None
            inputs[orig] = copied
        return {
            "format": FORMAT,
            "format_version": FORMAT_VERSION,
            "tool": tool,
            "created_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
            "sysroot": self.sysroot,
            "identity": {k: redact_text(v) for k, v in self.identity().items()},
            # Only what the checks asked for: an environment nobody read is not recorded.
            "env": dict(self._env or {}),
            "processes": [p.to_dict() for p in self._processes or []],
            "process_gaps": [g.to_dict() for g in self._process_gaps],
            "commands": commands,
            "files": files,
            "dirs": dict(sorted(self.dirs.items())),
            "links": dict(sorted(self.links.items())),
            "realpaths": dict(sorted(self.realpaths.items())),
            "stats": {k: (v.to_dict() if v else None) for k, v in sorted(self.stats.items())},
            "lstats": {k: (v.to_dict() if v else None) for k, v in sorted(self.lstats.items())},
            "which": dict(sorted(self.whiches.items())),
            "udev": _redact_tree(self.udevs),
            "inputs": inputs,
            "input_notes": {k: v for k, v in notes.items() if v},
            "cached_facts": dict(sorted(self.cached.items())),
            "process_identities": {
                str(k): v.to_dict() for k, v in sorted(self.identities.items()) if v is not None
            },
        }

    def close(self) -> None:
        self.inner.close()


def _redact_tree(value: Any) -> Any:
    """Every string of a JSON-able value redacted (udev attributes and properties)."""
    if isinstance(value, str):
        return redact_text(value)
    if isinstance(value, dict):
        return {k: _redact_tree(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_redact_tree(v) for v in value]
    return value


def _tar_into(staging: str, fh: Any) -> None:
    with tarfile.open(fileobj=fh, mode="w:gz") as tf:
        for dirpath, dirnames, filenames in os.walk(staging):
            dirnames.sort()
            for name in sorted(filenames):
                full = os.path.join(dirpath, name)
                tf.add(full, arcname=os.path.relpath(full, staging), recursive=False)


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


def _copy_input(local: str, root: str, rel_dir: str, notes: list[str] | None = None) -> str:
    """Copy a user input (file or directory of plain files) into the bundle; returns its path.

    Inside a directory nothing is followed: symbolic links (and FIFOs, sockets, devices) are
    left out with a note, so a link out of the trace, or a loop, copies nothing."""
    name = os.path.basename(os.path.normpath(local)) or "input"
    rel = f"{rel_dir}/{name}"
    dest = os.path.join(root, rel)
    os.makedirs(os.path.dirname(dest), exist_ok=True)
    notes = notes if notes is not None else []
    if os.path.isdir(local):
        # fwalk: every directory is reached through the open one above it and every file is
        # opened from its directory's fd without following a link, so a swap during the walk
        # cannot lead the copy out of the input
        for dirpath, dirnames, filenames, dirfd in os.fwalk(local, follow_symlinks=False):
            out_dir = os.path.join(dest, os.path.relpath(dirpath, local))
            os.makedirs(out_dir, exist_ok=True)
            dirnames.sort()
            for entry in sorted(dirnames + filenames):
                st = os.stat(entry, dir_fd=dirfd, follow_symlinks=False)
                shown = os.path.relpath(os.path.join(dirpath, entry), local)
                if stat.S_ISLNK(st.st_mode):
                    target = os.readlink(entry, dir_fd=dirfd)
                    notes.append(f"{shown}: symbolic link to {target!r} left out")
                    if entry in dirnames:
                        dirnames.remove(entry)
                elif stat.S_ISREG(st.st_mode):
                    try:
                        _copy_redacted(entry, os.path.join(out_dir, entry), dir_fd=dirfd)
                    except OSError as exc:
                        notes.append(f"{shown}: not copied ({exc.strerror or exc})")
                elif not stat.S_ISDIR(st.st_mode):
                    notes.append(f"{shown}: {kind_of(st.st_mode)} left out")
    else:
        _copy_redacted(local, dest)
    return rel


def _copy_redacted(src: str, dst: str, block: int = 1 << 20, dir_fd: int | None = None) -> str:
    """Copy a user input into a bundle with secrets masked (a bundle is shared in tickets).

    Streams in blocks cut at a newline, so memory stays bounded for multi-GB traces and logs;
    bytes that are not UTF-8 pass through unchanged (surrogateescape)."""
    fin_opened = open_regular(src, dir_fd=dir_fd, follow=dir_fd is None)
    with fin_opened as fin, open(dst, "wb") as fout:
        carry = b""
        while True:
            chunk = fin.read(block)
            data = carry + chunk
            if chunk:
                cut = data.rfind(b"\n")
                if cut < 0 and len(data) < 4 * block:
                    carry = data
                    continue
                cut = len(data) if cut < 0 else cut + 1
                data, carry = data[:cut], data[cut:]
            else:
                carry = b""
            if data:
                text = data.decode("utf-8", errors="surrogateescape")
                fout.write(redact_text(text).encode("utf-8", errors="surrogateescape"))
            if not chunk:
                break
    return dst
