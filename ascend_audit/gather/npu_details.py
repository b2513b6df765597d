"""Per-NPU npu-smi details: board and health blocks for each NPU the table lists, and topology."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ascend_audit.context import Context, gatherer
from ascend_audit.host.base import CommandResult

NPU_SMI_TOPO = ("npu-smi", "info", "-t", "topo")
_PLACEHOLDERS = frozenset({"", "NA", "N/A", "-", "--", "XXX", "UNKNOWN"})


def board_argv(npu_id: int) -> tuple[str, ...]:
    """`npu-smi info -t board -i N`."""
    return ("npu-smi", "info", "-t", "board", "-i", str(npu_id))


def health_argv(npu_id: int, chip_id: int | None = None) -> tuple[str, ...]:
    """`npu-smi info -t health -i N` (with `-c C` for one chip of a multi-chip NPU)."""
    argv = ("npu-smi", "info", "-t", "health", "-i", str(npu_id))
    return argv if chip_id is None else (*argv, "-c", str(chip_id))


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
    kv: Any  # facts.npu_smi.NpuSmiKv

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

    def board_of(self, npu_id: int) -> KvRun | None:
        """The board run of one NPU."""
        return next((b for b in self.boards if b.npu_id == npu_id), None)

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
    topo: Any  # facts.npu_smi.NpuTopo | None


@gatherer("npu_boards", "driver")
def npu_boards(ctx: Context) -> NpuBoards:
    from ascend_audit.facts.npu_smi import parse_kv

    run = ctx.fact("npu_smi")
    info = run.info
    if info is None or not info.chips:
        return NpuBoards(reason=f"npu-smi listed no NPU ({run.result.describe()})")
    targets: list[tuple[int, int | None, tuple[str, ...]]] = []
    for npu in info.npus:
        targets.append((npu, None, board_argv(npu)))
        chips = info.chips_of(npu)
        if len(chips) > 1:
            targets += [(npu, c.chip_id, health_argv(npu, c.chip_id)) for c in chips]
        else:
            targets.append((npu, None, health_argv(npu)))
    results = ctx.host.run_many([t[2] for t in targets], ctx.policy["driver.npu_smi_timeout"])
    runs = [
        KvRun(npu, chip, res, parse_kv(res.stdout if res.ok else ""))
        for (npu, chip, _argv), res in zip(targets, results)
    ]
    return NpuBoards(
        boards=tuple(r for r, t in zip(runs, targets) if "board" in t[2]),
        health=tuple(r for r, t in zip(runs, targets) if "health" in t[2]),
    )


@gatherer("npu_topo", "driver", commands=(NPU_SMI_TOPO,))
def npu_topo(ctx: Context) -> TopoRun:
    from ascend_audit.facts.npu_smi import parse_topo

    result = ctx.host.run(NPU_SMI_TOPO, ctx.policy["driver.npu_smi_timeout"])
    text = result.stdout if result.ok and result.stdout.strip() else ""
    return TopoRun(result, parse_topo(text) if text else None)


def inventory(facts: dict[str, Any]) -> dict[str, Any]:
    """The NPU link matrix, when this run read it."""
    run = facts.get("npu_topo")
    if run is None or run.topo is None:
        return {}
    return {"topology": {"npu_links": run.topo.to_dict()}}
