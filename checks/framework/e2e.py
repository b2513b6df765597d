"""FWK-E2E-001: benchmark results meet the policy's latency, throughput and error targets."""

from __future__ import annotations

from typing import Any

from ascend_audit.context import Context
from ascend_audit.facts.framework_inputs import BENCH_RESULTS
from ascend_audit.model import Evidence, Outcome, error, fail, passed, skip, worst
from ascend_audit.registry import check

from .inputs import input_errors

# (policy key, BenchResult field, label, unit, higher is better)
_TARGETS = (
    ("targets.ttft_p99_ms", "p99_ttft_ms", "p99 TTFT", "ms", False),
    ("targets.tpot_p99_ms", "p99_tpot_ms", "p99 TPOT", "ms", False),
    ("targets.min_output_throughput", "output_throughput", "output throughput", "tok/s", True),
    ("targets.max_failed_requests", "failed", "failed requests", "", False),
)


def _judge(ctx: Context, res: Any) -> Outcome:
    """One result against every target that is set: figures side by side."""
    ev = Evidence("file", res.source, "", res.to_dict())
    parts, bad = [], []
    for key, field, label, unit, higher in _TARGETS:
        target, have = ctx.policy[key], getattr(res, field)
        if target is None:
            continue
        if have is None:
            bad.append(f"{label} missing (target {target:g})")
            continue
        ok = have >= target if higher else have <= target
        cmp = "≥" if higher else "≤"
        text = f"{label} {have:g}{unit and ' ' + unit} (target {cmp} {target:g})"
        parts.append(text)
        if not ok:
            bad.append(text)
    ev.excerpt = "; ".join(parts)
    where = f"{res.source} ({res.completed}/{res.num_prompts} completed)"
    if bad:
        return fail(
            f"{where}: " + "; ".join(bad),
            [ev],
            "Tune the deployment (graph mode, batch sizes, TP) or revise the targets.",
        )
    return passed(f"{where}: " + "; ".join(parts), [ev])


@check("FWK-E2E-001")
def end_to_end_targets(ctx: Context) -> Outcome:
    inputs = ctx.fact(BENCH_RESULTS)
    if not inputs:
        return skip("no benchmark result (--bench-result from `vllm bench serve --save-result`)")
    bad = input_errors(ctx, "bench")
    if bad:
        return error(f"benchmark result unreadable: {bad[0].excerpt}", bad)
    findings = [_judge(ctx, i.result) for i in inputs]
    return worst(findings, "; ".join(o.summary for o in findings))
