"""Per-NPU npu-smi details: board and health blocks for each NPU the table lists, and topology."""

from __future__ import annotations

from typing import Any

from ascend_audit.context import Context, gatherer
from ascend_audit.facts.driver_scan import NPU_SMI
from ascend_audit.facts.npu_details import NPU_BOARDS, NPU_TOPO, KvRun, NpuBoards, TopoRun

NPU_SMI_TOPO = ("npu-smi", "info", "-t", "topo")


def board_argv(npu_id: int) -> tuple[str, ...]:
    """`npu-smi info -t board -i N`."""
    return ("npu-smi", "info", "-t", "board", "-i", str(npu_id))


def health_argv(npu_id: int, chip_id: int | None = None) -> tuple[str, ...]:
    """`npu-smi info -t health -i N` (with `-c C` for one chip of a multi-chip NPU)."""
    argv = ("npu-smi", "info", "-t", "health", "-i", str(npu_id))
    return argv if chip_id is None else (*argv, "-c", str(chip_id))


@gatherer(NPU_BOARDS, "driver")
def npu_boards(ctx: Context) -> NpuBoards:
    from ascend_audit.facts.npu_smi import parse_kv

    run = ctx.fact(NPU_SMI)
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


@gatherer(NPU_TOPO, "driver", commands=(NPU_SMI_TOPO,))
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
