"""Record: a host that remembers every answer of the live one and writes them as a bundle,
secrets masked and user inputs copied without following links."""

from __future__ import annotations

import json
import os
import shutil
import stat
import tarfile
import tempfile
import threading
import time
from collections.abc import Callable, Sequence
from typing import Any

from ascend_audit.host.base import (
    FILE_CAP,
    CommandResult,
    FileRead,
    Host,
    ProcessIdentity,
    ProcessInfo,
    StatInfo,
)
from ascend_audit.host.bundle import FORMAT, FORMAT_VERSION, MANIFEST, bundle_dir_problem
from ascend_audit.host.procscan import ProcessGap
from ascend_audit.redact import redact_text
from ascend_audit.safe_io import kind_of, open_regular
from ascend_audit.safe_write import publish_dir, staging_dir, write_stream


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
        needs_devices: bool = False,
    ) -> CommandResult:
        res = self.inner.run_as(argv, timeout, identity, extra_env, needs_devices)
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

    def listdir(self, path: str, limit: int | None = None) -> list[str] | None:
        res = self.inner.listdir(path, limit)
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
