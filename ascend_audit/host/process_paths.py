"""The paths a serving process's environment names, as a child the auditor starts may use them.

The framework probe is given the serving process's PATH, LD_LIBRARY_PATH, PYTHONPATH and CANN
variables. Each directory in them is a place the child's loader, interpreter or CANN runtime
will take code (or write logs) from, so each goes through the trust gate programs pass
(host/trust.py: owned by root or the service's user, writable by no one else, ACLs included),
resolved where the serving process itself sees it: under /proc/PID/root, its own root in its own
mount namespace. A process that shares the auditor's root keeps the path as it is; one in
another namespace (a container) gets /proc/PID/root/… so the child opens the very directory the
service opens, never a same-named one of the host. An entry that fails is dropped, with a note.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import dataclass

from ascend_audit.host.trust import local_acl, local_lstat, local_readlink, verify_walk

PATH_LISTS = ("PATH", "LD_LIBRARY_PATH", "PYTHONPATH")  # every entry names a directory


@dataclass(frozen=True)
class GatedEnv:
    """A child's environment with every path entry verified, and what was dropped and why."""

    env: dict[str, str]
    notes: tuple[str, ...] = ()


def same_root(proc_dir: str) -> bool:
    """Whether the process at `proc_dir` (/proc/PID) sees the auditor's own / in the auditor's
    own mount namespace (False when it cannot be told: the paths are then taken as its)."""
    try:
        if os.readlink(f"{proc_dir}/ns/mnt") != os.readlink("/proc/self/ns/mnt"):
            return False
        theirs, ours = os.stat(f"{proc_dir}/root"), os.stat("/")
    except (OSError, ValueError):
        return False
    return (theirs.st_dev, theirs.st_ino) == (ours.st_dev, ours.st_ino)


def verify_in_root(root: str, path: str, trusted: Iterable[int]) -> tuple[str, str]:
    """(the real path `path` reaches inside `root`, "") with every component verified, links
    followed inside `root`; ("", why) when another user could replace a part of it."""
    base = "" if root == "/" else root.rstrip("/")
    verdict = verify_walk(
        path,
        trusted,
        lambda p: local_lstat(base + p if base else p),
        lambda p: local_readlink(base + p if base else p),
        lambda p, st, t: local_acl(base + p if base else p, st, t),
    )
    return (verdict.real, "") if verdict.ok else ("", verdict.why)


def _is_path_like(key: str, value: str) -> bool:
    return key in PATH_LISTS or "/" in value


def gate_environ(
    env: dict[str, str], proc_root: str, shared_root: bool, trusted: Iterable[int]
) -> GatedEnv:
    """`env` with each path entry of each path-like variable (PATH_LISTS, and any value naming
    a path) verified in `proc_root`; entries that fail, or are relative, are dropped."""
    trusted = frozenset(trusted)
    out: dict[str, str] = {}
    notes: list[str] = []
    for key, value in env.items():
        if not _is_path_like(key, value):
            out[key] = value
            continue
        kept: list[str] = []
        for entry in value.split(os.pathsep):
            if not entry:
                continue
            if not entry.startswith("/"):
                notes.append(
                    f"{key}: dropped {entry!r} (a relative path names the working directory)"
                )
                continue
            real, why = verify_in_root(proc_root if not shared_root else "/", entry, trusted)
            if why:
                notes.append(f"{key}: dropped {entry} ({why})")
                continue
            kept.append(real if shared_root else proc_root.rstrip("/") + real)
        if kept:
            out[key] = os.pathsep.join(dict.fromkeys(kept))
    return GatedEnv(out, tuple(notes))
