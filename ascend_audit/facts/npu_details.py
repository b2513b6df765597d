"""Per-NPU npu-smi details as facts: board and health runs for each NPU, and the topology run."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ascend_audit.facts.keys import FactKey
from ascend_audit.host.base import CommandResult

if TYPE_CHECKING:
    from ascend_audit.facts.npu_smi import NpuSmiKv, NpuTopo

_PLACEHOLDERS = frozenset({"", "NA", "N/A", "-", "--", "XXX", "UNKNOWN"})


def known(value: str | None) -> str | None:
    """A version or name as npu-smi printed it, or None for NA / redacted placeholders."""
    if value is None or value.strip().upper() in _PLACEHOLDERS:
        return None
    return value.strip()


@dataclass(frozen=True)
class KvRun:
    """One `npu-smi info -t board|health` run for an NPU (or one of its chips), parsed."""

    npu_id: int
    chip_id: int | None
    result: CommandResult
    kv: NpuSmiKv

    @property
    def label(self) -> str:
        """`NPU 3` or `NPU 3 chip 1`."""
        return f"NPU {self.npu_id}" + ("" if self.chip_id is None else f" chip {self.chip_id}")

    @property
    def readable(self) -> bool:
        """The command exited 0 and printed at least one `Key : Value` block."""
        return self.result.ok and bool(self.kv.blocks)

    def problem(self) -> str | None:
        """Why this run cannot be used, in words; None when it can."""
        if not self.result.ok:
            return self.result.describe()
        if not self.result.stdout.strip():
            return f"`{self.result.command}` printed nothing"
        if not self.kv.blocks:
            return f"`{self.result.command}` printed no 'Key : Value' lines"
        return None

    def evidence(self) -> Any:
        """Command evidence with the parsed blocks as values."""
        return self.result.evidence(parsed=self.kv.to_dict()["blocks"][:4])


@dataclass(frozen=True)
class NpuBoards:
    """Board and health details for every NPU of the `npu-smi info` table."""

    boards: tuple[KvRun, ...] = ()
    health: tuple[KvRun, ...] = ()
    reason: str = ""  # why nothing was asked (no npu-smi table)

    def health_of(self, npu_id: int, chip_id: int) -> KvRun | None:
        """The health run covering one chip (per-chip run first, else the NPU's run)."""
        runs = [h for h in self.health if h.npu_id == npu_id]
        exact = next((h for h in runs if h.chip_id == chip_id), None)
        return exact or next((h for h in runs if h.chip_id is None), None)

    def firmware_versions(self) -> dict[int, str]:
        """NPU id -> `Firmware Version` of its board block, where known."""
        out = {b.npu_id: known(b.kv.first("Firmware Version")) for b in self.boards if b.readable}
        return {k: v for k, v in out.items() if v}

    def software_versions(self) -> dict[int, str]:
        """NPU id -> `Software Version` (the driver it runs) of its board block, where known."""
        out = {b.npu_id: known(b.kv.first("Software Version")) for b in self.boards if b.readable}
        return {k: v for k, v in out.items() if v}


@dataclass(frozen=True)
class TopoRun:
    """`npu-smi info -t topo` as run, and its matrix (None when it printed nothing)."""

    result: CommandResult
    topo: NpuTopo | None


NPU_BOARDS: FactKey[NpuBoards] = FactKey("npu_boards")
NPU_TOPO: FactKey[TopoRun] = FactKey("npu_topo")
