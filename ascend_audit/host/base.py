"""The Host interface: the only way checks and facts reach the node, live or recorded."""

from __future__ import annotations

import fnmatch
import posixpath
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from ascend_audit.host.procscan import ProcessGap
from ascend_audit.model import Evidence

DEFAULT_TIMEOUT = 10.0
OUTPUT_CAP = 8 * 1024 * 1024  # bytes kept per stream of a command
FILE_CAP = 4 * 1024 * 1024  # bytes read from one node file


@dataclass(frozen=True)
class CommandResult:
    """What running one command gave: never an exception, always a fact."""

    argv: tuple[str, ...]
    status: str  # ok | nonzero | missing | refused | timeout | error | signal
    rc: int | None = None
    stdout: str = ""
    stderr: str = ""
    duration_ms: float = 0.0
    truncated: bool = False
    error: str = ""
    notes: tuple[str, ...] = ()  # how it was run, when that differs from what was asked

    @property
    def ok(self) -> bool:
        return self.status == "ok"

    @property
    def command(self) -> str:
        return " ".join(self.argv)

    def describe(self) -> str:
        """One line saying how the command ended."""
        if self.status == "ok":
            return f"`{self.command}` exited 0 in {self.duration_ms:.0f} ms"
        if self.status == "missing":
            return f"`{self.argv[0]}` not found on PATH"
        if self.status == "refused":  # error: "refused PATH: the entry another user controls"
            return f"`{self.command}` was not run: {self.error}"
        if self.status == "timeout":
            return f"`{self.command}` did not finish within its timeout ({self.error})"
        if self.status == "signal":
            return f"`{self.command}` was killed by a signal ({self.error})"
        if self.status == "nonzero":
            return f"`{self.command}` exited {self.rc}"
        return f"`{self.command}` could not run: {self.error}"

    def evidence(self, excerpt: str | None = None, **values: Any) -> Evidence:
        """Evidence of kind `command` with exit status, duration and an excerpt of the output."""
        text = excerpt if excerpt is not None else (self.stdout or self.stderr)
        if len(text) > 4000:
            text = text[:4000] + f"\n… ({len(text) - 4000} more characters)"
        if self.truncated:
            text += "\n[output capped by ascend-audit]"
        base: dict[str, Any] = {
            "status": self.status,
            "rc": self.rc,
            "duration_ms": round(self.duration_ms, 1),
        }
        if self.error:
            base["error"] = self.error
        if self.notes:
            base["notes"] = list(self.notes)
        base.update(values)
        return Evidence("command", self.command, text, base)

    def to_dict(self) -> dict[str, Any]:
        return {
            "argv": list(self.argv),
            "status": self.status,
            "rc": self.rc,
            "duration_ms": round(self.duration_ms, 3),
            "truncated": self.truncated,
            "error": self.error,
            **({"notes": list(self.notes)} if self.notes else {}),
        }


@dataclass(frozen=True)
class FileRead:
    """Text of one node file, or why it could not be read."""

    path: str
    text: str | None
    error: str | None = None
    truncated: bool = False

    @property
    def ok(self) -> bool:
        return self.text is not None

    def evidence(self, excerpt: str | None = None, **values: Any) -> Evidence:
        text = excerpt if excerpt is not None else (self.text or self.error or "")
        if len(text) > 4000:
            text = text[:4000] + f"\n… ({len(text) - 4000} more characters)"
        if self.error:
            values = {"error": self.error, **values}
        return Evidence("file", self.path, text, values)


@dataclass(frozen=True)
class StatInfo:
    """Ownership and type of a node path."""

    mode: int
    uid: int
    gid: int
    owner: str
    group: str
    kind: str  # file | dir | char | block | link | other
    size: int = 0

    @property
    def mode_octal(self) -> str:
        return f"{self.mode & 0o7777:04o}"

    def to_dict(self) -> dict[str, Any]:
        return {
            "mode": self.mode_octal,
            "uid": self.uid,
            "gid": self.gid,
            "owner": self.owner,
            "group": self.group,
            "kind": self.kind,
        }

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> StatInfo:
        return cls(
            int(d["mode"], 8),
            int(d["uid"]),
            int(d["gid"]),
            d.get("owner", ""),
            d.get("group", ""),
            d.get("kind", "file"),
        )


@dataclass(frozen=True)
class ProcessInfo:
    """A running process, as psutil saw it, with its command line already redacted."""

    pid: int
    name: str
    exe: str
    cmdline: tuple[str, ...]
    username: str
    cpu_affinity: tuple[int, ...] = ()
    cwd: str = ""
    environ: dict[str, str] = field(default_factory=dict)
    ppid: int | None = None  # from /proc/PID/stat, read within the scan's deadline

    def to_dict(self) -> dict[str, Any]:
        return {
            "pid": self.pid,
            "ppid": self.ppid,
            "name": self.name,
            "exe": self.exe,
            "cmdline": list(self.cmdline),
            "username": self.username,
            "cpu_affinity": list(self.cpu_affinity),
            "cwd": self.cwd,
            "environ": dict(self.environ),
        }

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> ProcessInfo:
        return cls(
            int(d["pid"]),
            d.get("name", ""),
            d.get("exe", ""),
            tuple(d.get("cmdline") or ()),
            d.get("username", ""),
            tuple(d.get("cpu_affinity") or ()),
            d.get("cwd", ""),
            dict(d.get("environ") or {}),
            d["ppid"] if type(d.get("ppid")) is int else None,  # a bool or text is no pid
        )


@dataclass(frozen=True)
class ProcessIdentity:
    """Who a running process is: its real executable (from /proc/PID/exe) and credentials."""

    pid: int
    exe: str  # the node path /proc/PID/exe points at ("" when unreadable)
    uid: int
    gid: int
    groups: tuple[int, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        return {
            "pid": self.pid,
            "exe": self.exe,
            "uid": self.uid,
            "gid": self.gid,
            "groups": list(self.groups),
        }

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> ProcessIdentity:
        return cls(
            int(d["pid"]),
            str(d.get("exe") or ""),
            int(d["uid"]),
            int(d["gid"]),
            tuple(int(g) for g in d.get("groups") or ()),
        )


def parse_proc_status(pid: int, exe: str, text: str) -> ProcessIdentity | None:
    """Credentials from /proc/PID/status (`Uid:`/`Gid:` real, effective, …; `Groups:`)."""
    fields: dict[str, list[str]] = {}
    for line in text.splitlines():
        key, sep, value = line.partition(":")
        if sep:
            fields[key.strip()] = value.split()
    try:
        uid = int(fields["Uid"][1])  # effective ids: what the process acts as
        gid = int(fields["Gid"][1])
        groups = tuple(int(g) for g in fields.get("Groups", []))
    except (KeyError, IndexError, ValueError):
        return None
    return ProcessIdentity(pid, exe, uid, gid, groups)


class Host:
    """Read-only access to one node. Subclasses: LiveHost, SnapshotHost, RecordingHost."""

    kind = "abstract"
    sysroot = "/"

    def run(self, argv: list[str] | tuple[str, ...], timeout: float | None = None) -> CommandResult:
        """Run a command without a shell, with a timeout; never raises."""
        return self.run_many([argv], timeout)[0]

    def run_many(
        self, argvs: Sequence[Sequence[str]], timeout: float | None = None
    ) -> list[CommandResult]:
        """Run several commands concurrently (bounded pool), each with its own timeout."""
        raise NotImplementedError

    def read_text(self, path: str, limit: int = FILE_CAP) -> FileRead:
        raise NotImplementedError

    def listdir(self, path: str, limit: int | None = None) -> list[str] | None:
        """Sorted entries of a directory (None when unreadable); with `limit`, at most that many
        read (which ones is the directory's order, then sorted)."""
        raise NotImplementedError

    def realpath(self, path: str) -> str:
        raise NotImplementedError

    def readlink(self, path: str) -> str | None:
        raise NotImplementedError

    def stat(self, path: str) -> StatInfo | None:
        raise NotImplementedError

    def lstat(self, path: str) -> StatInfo | None:
        """Like stat, but of a link itself (kind "link") rather than what it points at."""
        raise NotImplementedError

    def exists(self, path: str) -> bool:
        return self.stat(path) is not None

    def glob(self, pattern: str) -> list[str]:
        """Node paths matching a pattern whose wildcards sit in the last component."""
        directory, name = posixpath.split(pattern)
        entries = self.listdir(directory) or []
        return sorted(posixpath.join(directory, e) for e in entries if fnmatch.fnmatch(e, name))

    def env(self) -> dict[str, str]:
        """The audit's environment, redacted."""
        raise NotImplementedError

    def identity(self) -> dict[str, str]:
        """hostname, kernel, os, arch."""
        raise NotImplementedError

    def processes(self) -> list[ProcessInfo]:
        raise NotImplementedError

    def process_gaps(self) -> list[ProcessGap]:
        """The processes the last processes() scan could not read in time: while any is listed
        the table is incomplete (a process missing from it may be one of them)."""
        return []

    def process_identity(self, pid: int) -> ProcessIdentity | None:
        """The real executable and credentials of a process, or None when they cannot be read."""
        return None

    def run_as(
        self,
        argv: list[str] | tuple[str, ...],
        timeout: float,
        identity: ProcessIdentity | None,
        extra_env: dict[str, str] | None = None,
        needs_devices: bool = False,
    ) -> CommandResult:
        """Run a command as a process's user (uid, gid, groups; None: the auditor's) in a minimal
        copy of that process's environment, every path in it verified (host/process_paths.py),
        plus `extra_env`; a root process's command runs unprivileged when it needs no NPU
        device and works so; replaying hosts answer from their recording."""
        return self.run(argv, timeout)

    def udev(self, subsystem: str) -> list[dict[str, Any]] | None:
        """Devices of a udev subsystem with their attributes, or None when libudev is not usable."""
        raise NotImplementedError

    def which(self, command: str) -> str | None:
        raise NotImplementedError

    def input_path(self, path: str) -> str | None:
        """Local path of a user-given input (trace, log, config), or None when it is absent."""
        raise NotImplementedError

    def cached_fact(self, name: str, compute: Callable[[], Any]) -> Any:
        """A JSON-able result computed from big local inputs (model weights) instead of copying
        them: live hosts compute it, recordings keep the result, snapshots replay it (None when
        the bundle does not hold it)."""
        return compute()

    def close(self) -> None:
        """Release temporary resources."""
