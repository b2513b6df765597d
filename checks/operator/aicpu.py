"""AI CPU operators: how much device time runs on the slow AI CPU instead of AI Core."""

from __future__ import annotations

from ascend_audit.context import Context
from ascend_audit.facts.operator_inputs import (
    PROFILER,
    TOP_OPS,
    OperatorTraces,
    op_row,
    per_rank_shares,
    time_by_core,
)
from ascend_audit.facts.profiler import AiCpuOp, KernelSummary
from ascend_audit.model import Outcome, fail, passed, skip, warn
from ascend_audit.registry import check

from ..wording import percent
from .traces import (
    NO_TRACE,
    aicpu_remedies,
    ops_table,
    trace_evidence,
    unreadable,
)


@check("OPR-AICPU-001")
def aicpu_operators(ctx: Context) -> Outcome:
    t: OperatorTraces = ctx.fact(PROFILER)
    if not t.given:
        return skip(NO_TRACE)
    if not t.readable or t.merged is None:
        return unreadable(t)
    allow = {a.lower() for a in ctx.policy["operator.aicpu_allowlist"]}
    return _judge(t, t.merged, allow, ctx.policy["operator.aicpu_share_fail"])


def _judge(t: OperatorTraces, m: KernelSummary, allow: set[str], fail_at: float) -> Outcome:
    """FAIL on the time share (merged or any rank), WARN on types off the allow-list."""
    top = [op_row(o) for o in m.ai_cpu_by_name[:TOP_OPS]]
    shares = per_rank_shares(t)
    metrics = {
        "time_by_core_us": time_by_core(m),
        "top_aicpu_ops": top,
        "aicpu_share": round(m.ai_cpu_share, 6),
        "per_rank": shares,
        "aicpu_count": m.ai_cpu.count,
        "aicpu_types": [o.op_type for o in m.ai_cpu_by_type],
    }
    ev = [trace_evidence(t, ops_table(top) if top else "", per_rank_aicpu_share=shares)]
    kernels = f"{m.rows} kernels on {len(shares)} rank(s)"
    if not m.ai_cpu.count:
        return _damaged(t, passed(f"no AI CPU operator in {kernels}", ev, **metrics))
    types = ", ".join(f"{o.op_type} ×{o.count} ({o.total_us:.0f} us)" for o in m.ai_cpu_by_type)
    hot = {r: s for r, s in shares.items() if s >= fail_at}
    if m.ai_cpu_share >= fail_at or hot:
        where = "; ".join(f"{r} {s:.1%}" for r, s in hot.items()) if len(shares) > 1 else ""
        return fail(
            f"AI CPU takes {m.ai_cpu_share:.1%} of device time (policy fails at {percent(fail_at)})"
            + (f", per rank: {where}" if where else "")
            + f": {types}",
            ev,
            _remedy(list(m.ai_cpu_by_name)),
            **metrics,
        )
    off_list = [o for o in m.ai_cpu_by_type if o.op_type.lower() not in allow]
    if off_list:
        names = ", ".join(o.op_type for o in off_list)
        return warn(
            f"{len(off_list)} AI CPU operator type(s) not on the allow-list: {names}; "
            f"{m.ai_cpu.count} AI CPU kernels, {m.ai_cpu_share:.2%} of device time: {types}",
            ev,
            _remedy([o for o in m.ai_cpu_by_name if o.op_type.lower() not in allow]),
            **metrics,
        )
    return _damaged(
        t, passed(f"AI CPU operators all on the allow-list ({types}); {kernels}", ev, **metrics)
    )


def _remedy(ops: list[AiCpuOp]) -> str | None:
    fixes = aicpu_remedies(ops)
    return "; ".join(fixes) + "." if fixes else None


def _damaged(t: OperatorTraces, ok: Outcome) -> Outcome:
    """A clean result on a damaged table is a warning: rows the verdict never saw."""
    if not t.damage:
        return ok
    return warn(
        f"{ok.summary}; but the trace is partly unreadable: {t.damage[0]}",
        ok.evidence,
        "Re-export the profile (the file looks truncated) and run the audit again.",
        **ok.metrics,
    )
