"""NPU health: every chip reports OK in the npu-smi table and in its `-t health` block."""

from __future__ import annotations

from typing import Any

from ascend_audit.context import Context
from ascend_audit.facts.driver_scan import NPU_SMI
from ascend_audit.facts.npu_details import NPU_BOARDS
from ascend_audit.model import Evidence, Outcome, Status, error, fail, passed, skip
from ascend_audit.registry import check

from .npu_absent import NO_NPU, no_npu_at_all

_ORDER = (Status.PASS, Status.WARN, Status.FAIL)
_RANK = (Status.FAIL, Status.ERROR, Status.WARN)


def grade(health: str | None) -> Status:
    """OK passes, Warning warns, anything else (Alarm, Critical, UNKNOWN, blank) fails."""
    word = (health or "").strip().lower()
    if word == "ok":
        return Status.PASS
    if word == "warning":
        return Status.WARN
    return Status.FAIL


def chip_finding(chip: Any, run: Any) -> Outcome | None:
    """One chip's verdict from its table health and its `-t health` block (None when OK)."""
    states = [chip.health or "blank"]
    codes: tuple[str, ...] = ()
    info = None
    if run is not None and run.readable:
        states += list(run.kv.health_statuses)
        codes, info = run.kv.error_codes, run.kv.error_information
        info = "; ".join(x.strip() for x in (info or "").splitlines() if x.strip()) or None
    worst = max((grade(s) for s in states), key=_ORDER.index)
    if worst is Status.PASS:
        return None
    shown = "/".join(dict.fromkeys(s for s in states if grade(s) is not Status.PASS))
    detail = ""
    if codes:
        detail = f" (error code {', '.join(codes)}" + (f": {info}" if info else "") + ")"
    return Outcome(worst, f"NPU {chip.npu_id} chip {chip.chip_id} is {shown}{detail}")


def query_finding(run: Any) -> Outcome | None:
    """A health query that did not answer: a failing query fails, garbage cannot be judged."""
    why = run.problem()
    if why is None:
        return None
    if run.result.status in ("nonzero", "timeout", "signal"):
        return fail(f"{run.label} health query failed: {why}")
    return error(f"{run.label} health unreadable: {why}")


def _worth_showing(run: Any) -> bool:
    statuses = run.kv.health_statuses if run.readable else ()
    return not run.readable or any(grade(s) is not Status.PASS for s in statuses)


@check("DRV-NPU-002")
def npu_health(ctx: Context) -> Outcome:
    if no_npu_at_all(ctx):
        return skip(f"{NO_NPU} (DRV-NPU-001): no chip to judge")
    run = ctx.fact(NPU_SMI)
    info = run.info
    if info is None or not info.chips:
        return error(
            f"could not judge NPU health: npu-smi gave no table ({run.result.describe()})",
            [run.result.evidence()],
        )
    boards = ctx.fact(NPU_BOARDS)
    table = {f"NPU {c.npu_id} chip {c.chip_id}": c.health for c in info.chips}
    evidence: list[Evidence] = [run.result.evidence(health=table)]
    evidence += [h.evidence() for h in boards.health if _worth_showing(h)]
    found = [chip_finding(c, boards.health_of(c.npu_id, c.chip_id)) for c in info.chips]
    found += [query_finding(h) for h in boards.health]
    bad = sorted((f for f in found if f is not None), key=lambda f: _RANK.index(f.status))
    if not bad:
        return passed(f"all {info.chip_count} chips report OK", evidence, chips=info.chip_count)
    summary = "; ".join(f.summary for f in bad)
    return Outcome(bad[0].status, summary, evidence, {"unhealthy": len(bad)})
