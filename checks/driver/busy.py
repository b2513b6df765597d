"""Busy NPUs: before go-live no process outside the serving tree holds an NPU, and HBM is idle."""

from __future__ import annotations

from ascend_audit.context import Context
from ascend_audit.facts.driver_scan import NPU_SMI
from ascend_audit.facts.npu_smi import NpuChip
from ascend_audit.facts.npu_users import NPU_USERS
from ascend_audit.model import Outcome, Status, fail, passed, skip, warn
from ascend_audit.registry import check

from .npu_absent import NO_NPU, no_npu_at_all


def _used_mb(chip: NpuChip) -> int | None:
    """Device memory in use: HBM where the chip has it, else its DDR (310P)."""
    return chip.hbm_used_mb if chip.hbm_total_mb else chip.memory_used_mb


@check("DRV-NPU-003")
def npus_free(ctx: Context) -> Outcome:
    if no_npu_at_all(ctx):
        return skip(f"{NO_NPU} (DRV-NPU-001): no NPU to hold")
    run = ctx.fact(NPU_SMI)
    info = run.info
    if info is None or not info.chips:
        return skip(f"npu-smi gave no table ({run.result.describe()}): DRV-NPU-001 judges that")
    users = ctx.fact(NPU_USERS)
    baseline = int(ctx.policy["driver.idle_hbm_mb"])
    evidence = [
        run.result.evidence(users=users.to_dict()["users"], idle_hbm_mb=baseline),
    ]
    findings: list[Outcome] = []
    foreign = [u for u in users.users if not u.serving]
    blind = bool(users.serving_pids) and not info.has_container_pid
    for u in foreign:
        where = f"NPU {u.npu_id}" + ("" if u.chip_id is None else f" chip {u.chip_id}")
        mem = f"{u.memory_mb} MB" if u.memory_mb is not None else "memory unknown"
        text = (
            f"{where}: {u.label()} holds {mem} and is not part of the serving process tree; "
            f"while it runs, HCCL's device port on {where} (16666 by default) will be busy and a "
            "multi-NPU start fails (HCCL: listen on ip[…] and specific port[…] fail)"
        )
        if blind and not u.known_here:
            findings.append(
                warn(text + " (or it is the service itself, seen through the host's pid)")
            )
        else:
            findings.append(fail(text))
    if users.table_gaps and users.users:
        # Whether a pid belongs to the serving tree was judged on an incomplete process table.
        findings = [
            Outcome(
                Status.ERROR,
                f"process table incomplete ({'; '.join(users.table_gaps[:3])}"
                + (f" (+{len(users.table_gaps) - 3} more)" if len(users.table_gaps) > 3 else "")
                + f"): cannot tell whether the {len(users.users)} process(es) on the NPUs belong "
                "to the serving tree",
                [],
            )
        ]
    listed = {(u.npu_id, u.chip_id) for u in users.users} | {(u.npu_id, None) for u in users.users}
    for chip in info.chips:
        used = _used_mb(chip)
        if used is None or used <= baseline:
            continue
        if (chip.npu_id, chip.chip_id) in listed or (chip.npu_id, None) in listed:
            continue
        findings.append(
            fail(
                f"NPU {chip.npu_id} chip {chip.chip_id}: {used} MB of device memory in use with "
                f"no process listed (idle baseline {baseline} MB): a process in another container "
                "or a leaked allocation holds it"
            )
        )
    if not findings:
        mine = len(users.users)
        head = f"{mine} process(es) of the serving tree on the NPUs; " if mine else "no process on "
        tail = "any NPU; " if not mine else ""
        ok = f"{head}{tail}memory of every chip without a process at or below {baseline} MB"
        if not info.has_process_table:
            ok += " (npu-smi printed no process table)"
        return passed(ok, evidence, foreign=0)
    rank = {Status.FAIL: 0, Status.ERROR: 1}
    bad = sorted(findings, key=lambda f: rank.get(f.status, 2))
    summary = "; ".join(f.summary for f in bad)
    return Outcome(bad[0].status, summary, evidence, {"foreign": len(foreign)})
