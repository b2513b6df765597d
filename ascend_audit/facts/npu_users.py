"""Who holds each NPU: npu-smi's process rows joined with the node's processes and their parents."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ascend_audit.facts.keys import FactKey


@dataclass(frozen=True)
class NpuUser:
    """One process row of `npu-smi info`, and what the node knows about that pid."""

    npu_id: int
    chip_id: int | None
    pid: int | None
    name: str
    memory_mb: int | None
    known_here: bool  # the pid is a process of this PID namespace
    serving: bool  # the pid is a serving process or one of its descendants
    command: str = ""

    def label(self) -> str:
        who = self.name or (self.command[:60] if self.command else "")
        where = "" if self.known_here else ", not a process of this PID namespace"
        return f"pid {self.pid}" + (f" ({who})" if who else "") + where

    def to_dict(self) -> dict[str, Any]:
        return {k: getattr(self, k) for k in self.__dataclass_fields__}


@dataclass(frozen=True)
class NpuUsers:
    """Every process npu-smi lists, and the serving processes this node runs."""

    users: tuple[NpuUser, ...] = ()
    serving_pids: tuple[int, ...] = ()
    has_process_table: bool = False
    # processes the node's scan could not read in time ("process 1234 did not answer
    # /proc/1234/cmdline within 5 s"): while any is listed, serving_pids may be short
    table_gaps: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        return {
            "users": [u.to_dict() for u in self.users],
            "serving_pids": list(self.serving_pids),
            "has_process_table": self.has_process_table,
            "table_gaps": list(self.table_gaps),
        }


def parent_pid(stat_text: str) -> int | None:
    """The parent pid from /proc/PID/stat (`pid (comm) state ppid …`; comm may hold spaces)."""
    tail = (stat_text or "").rpartition(")")[2].split()
    return int(tail[1]) if len(tail) > 1 and tail[1].isdigit() else None


NPU_USERS: FactKey[NpuUsers] = FactKey("npu_users")
