"""Replay: a bundle holds every answer the checks asked the node for."""

from __future__ import annotations

import os
import posixpath
import shutil
import tempfile
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
from ascend_audit.host.bundle import (
    MEMBER_CAP,
    NOT_RECORDED,
    SnapshotError,
    extract_bundle,
    load_manifest,
)
from ascend_audit.host.procscan import ProcessGap
from ascend_audit.safe_io import read_bytes


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
                    tuple(rec.get("notes") or ()),
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

    def listdir(self, path: str, limit: int | None = None) -> list[str] | None:
        entries = (self.manifest.get("dirs") or {}).get(path)
        return list(entries)[:limit] if entries is not None else None

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
