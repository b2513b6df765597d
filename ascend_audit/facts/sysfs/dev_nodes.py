"""/dev nodes: davinciN and the control nodes, with owner, group and mode."""

from __future__ import annotations

import posixpath
import re
import stat as stat_mod
from dataclasses import dataclass
from typing import Any

from ascend_audit.facts.common import to_jsonable
from ascend_audit.facts.sysfs.base import DAVINCI_RE, DEV_CONTROL_NODES, SafeReader, StatReader

# ---------------------------------------------------------------------------------------------
# /dev nodes


@dataclass(frozen=True)
class DevNode:
    """One device node and its ownership."""

    path: str
    exists: bool
    owner: str | None = None
    group: str | None = None
    uid: int | None = None
    gid: int | None = None
    mode: str | None = None  # permission bits as octal, e.g. "0660"
    is_char_device: bool | None = None


@dataclass(frozen=True)
class DevNodes:
    """The Ascend device nodes: /dev/davinciN and the control nodes."""

    davinci: tuple[DevNode, ...]
    control: tuple[DevNode, ...]
    problems: tuple[str, ...] = ()

    @property
    def davinci_indices(self) -> tuple[int, ...]:
        out = []
        for n in self.davinci:
            m = DAVINCI_RE.match(posixpath.basename(n.path))
            if m and n.exists:
                out.append(int(m.group(1)))
        return tuple(sorted(out))

    @property
    def missing_control(self) -> tuple[str, ...]:
        return tuple(n.path for n in self.control if not n.exists)

    def node(self, path: str) -> DevNode | None:
        return next((n for n in (*self.davinci, *self.control) if n.path == path), None)

    def to_dict(self) -> dict[str, Any]:
        d = to_jsonable(self)
        d["davinci_indices"] = list(self.davinci_indices)
        return d


def _mode_str(mode: Any) -> str | None:
    if isinstance(mode, int) and not isinstance(mode, bool):
        return f"{mode & 0o7777:04o}"
    if isinstance(mode, str):
        s = mode.strip().lower().removeprefix("0o")
        if re.fullmatch(r"[0-7]{1,6}", s):
            return f"{int(s, 8) & 0o7777:04o}"
    return None


def _dev_node(acc: SafeReader, path: str) -> DevNode:
    st = acc.stat(path)
    if st is None:
        if getattr(acc.reader, "stat", None) is None and acc.exists(path):
            return DevNode(path, True)
        return DevNode(path, False)
    mode = getattr(st, "mode", None)
    is_char = getattr(st, "is_char_device", None)
    if is_char is None:
        kind = getattr(st, "kind", None)
        if isinstance(kind, str):
            is_char = kind == "char"
        elif isinstance(mode, int) and mode > 0o7777:
            is_char = stat_mod.S_ISCHR(mode)
    uid, gid = getattr(st, "uid", None), getattr(st, "gid", None)
    owner, group = getattr(st, "owner", None), getattr(st, "group", None)
    return DevNode(
        path=path,
        exists=True,
        owner=str(owner) if owner not in (None, "") else None,
        group=str(group) if group not in (None, "") else None,
        uid=uid if isinstance(uid, int) else None,
        gid=gid if isinstance(gid, int) else None,
        mode=_mode_str(mode),
        is_char_device=bool(is_char) if is_char is not None else None,
    )


def collect_dev_nodes(reader: StatReader) -> DevNodes:
    """Existence, ownership and mode of /dev/davinci*, davinci_manager, devmm_svm, hisi_hdc."""
    acc = SafeReader(reader)
    if getattr(reader, "stat", None) is None:
        acc.problems.append("reader cannot stat: ownership and mode of /dev nodes unknown")
    names = [e for e in acc.listdir("/dev") if DAVINCI_RE.match(e)]
    names.sort(key=lambda e: int(e[len("davinci") :]))
    davinci = tuple(_dev_node(acc, f"/dev/{n}") for n in names)
    control = tuple(_dev_node(acc, p) for p in DEV_CONTROL_NODES)
    return DevNodes(davinci, control, tuple(acc.problems))
