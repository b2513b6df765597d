"""Layout conversions: device time spent converting tensor formats (TransData, format Cast)."""

from __future__ import annotations

from typing import Any

from ascend_audit.context import Context
from ascend_audit.facts.operator_inputs import PROFILER, OperatorTraces
from ascend_audit.model import Outcome, passed, skip, warn
from ascend_audit.registry import check

from ..wording import percent
from .traces import NO_TRACE, trace_evidence, unreadable


@check("OPR-LAYOUT-001")
def layout_conversions(ctx: Context) -> Outcome:
    t: OperatorTraces = ctx.fact(PROFILER)
    if not t.given:
        return skip(NO_TRACE)
    if not t.readable or t.merged is None:
        return unreadable(t)
    m = t.merged
    conv_us = m.transdata.total_us + m.format_cast.total_us
    share = conv_us / m.total_us if m.total_us > 0 else 0.0
    limit = ctx.policy["operator.layout_share_warn"]
    text = (
        f"TransData ×{m.transdata.count} ({m.transdata.total_us:.0f} us), format-conversion Cast "
        f"×{m.format_cast.count} ({m.format_cast.total_us:.0f} us): {share:.1%} of device time"
    )
    metrics: dict[str, Any] = {
        "layout_share": round(share, 6),
        "transdata": m.transdata.to_dict(),
        "format_cast": m.format_cast.to_dict(),
    }
    ev = [trace_evidence(t, text, **metrics)]
    if share > limit:
        return warn(f"{text} (policy warns above {percent(limit)})", ev, **metrics)
    return passed(text, ev, **metrics)
