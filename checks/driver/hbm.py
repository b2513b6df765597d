"""DRV-HBM-001: every NPU chip of the node has the same HBM capacity (one card model)."""

from __future__ import annotations

from ascend_audit.context import Context
from ascend_audit.facts.driver_scan import NPU_SMI
from ascend_audit.model import Outcome, passed, skip, warn
from ascend_audit.registry import check


@check("DRV-HBM-001")
def same_hbm(ctx: Context) -> Outcome:
    run = ctx.fact(NPU_SMI)
    info = run.info
    if info is None or not info.chips:
        return skip("npu-smi gave no chip table (DRV-NPU-001 says why)")
    sizes = {f"NPU {c.npu_id} chip {c.chip_id}": c.hbm_total_mb for c in info.chips}
    known = {chip: mb for chip, mb in sizes.items() if mb}
    evidence = [run.result.evidence(hbm_total_mb=sizes)]
    if not known:
        return skip("npu-smi shows no HBM capacity for any chip (no HBM-Usage column)", evidence)
    distinct = sorted(set(known.values()))
    unknown = len(sizes) - len(known)
    tail = f"; {unknown} chip(s) show no HBM capacity" if unknown else ""
    if len(distinct) == 1:
        return passed(f"{len(known)} chip(s), each with {distinct[0]} MB HBM{tail}", evidence)
    smallest = min(known, key=lambda chip: known[chip])
    return warn(
        f"chips differ in HBM capacity ({', '.join(f'{mb} MB' for mb in distinct)}): the engine "
        f"sizes every rank by the smallest, {smallest} with {known[smallest]} MB{tail}",
        evidence,
        max_hbm_mb=distinct[-1],
        min_hbm_mb=distinct[0],
    )
