"""Judging helpers of the operator checks: trace evidence, the unreadable-trace ERROR, remedies."""

from __future__ import annotations

from typing import Any

from ascend_audit.facts.operator_inputs import OperatorTraces
from ascend_audit.facts.profiler import AiCpuOp
from ascend_audit.model import Evidence, Outcome, Status

NO_TRACE = "no profiler trace given (--trace)"


def ops_table(ops: list[dict[str, Any]]) -> str:
    """A fixed-width table of operators for an evidence excerpt."""
    lines = [f"{'type':<16} {'count':>7} {'total_us':>12} {'mean_us':>10}  name / dtypes / shapes"]
    for o in ops:
        extra = " / ".join(
            x for x in (o["name"], ",".join(o["input_dtypes"]), " ".join(o["input_shapes"])) if x
        )
        lines.append(
            f"{o['type']:<16} {o['count']:>7} {o['total_us']:>12.1f} {o['mean_us']:>10.1f}  {extra}"
        )
    return "\n".join(lines)


def trace_evidence(t: OperatorTraces, excerpt: str = "", **values: Any) -> Evidence:
    """Evidence of kind `trace` naming every --trace and the layouts read."""
    layouts = sorted({r.kernels.layout for r in t.kernel_ranks if r.kernels})
    base: dict[str, Any] = {"ranks": [r.rank for r in t.kernel_ranks], "layouts": layouts}
    if t.merged is not None:
        base.update(kernels=t.merged.rows, device_time_us=round(t.merged.total_us, 3))
    if t.merged is not None and t.merged.problems:
        base["problems"] = list(t.merged.problems[:5])
    base.update(values)
    return Evidence("trace", t.source(), excerpt, base)


def unreadable(t: OperatorTraces) -> Outcome:
    """ERROR for traces that hold no usable kernel table, naming what was found instead."""
    return Outcome(
        Status.ERROR,
        f"cannot read the profiler trace: {t.unreadable_reason}",
        [trace_evidence(t, "\n".join(t.problems[:5]))],
        remediation="Pass the torch_npu profiler output (*_ascend_pt or its "
        "ASCEND_PROFILER_OUTPUT/ with kernel_details.csv), an msprof PROF_* directory (op_summary_*"
        ".csv), or one such CSV; re-export it if the file is empty or cut short.",
    )


_WIDE_DTYPES = ("INT64", "DOUBLE", "FLOAT64", "UINT64", "COMPLEX")


def aicpu_remedies(ops: list[AiCpuOp]) -> list[str]:
    """Fixes for the causes the evidence shows: wide dtypes, Cast, ArgSort, dynamic shapes."""
    out: list[str] = []
    dtypes = {d.upper().replace("DT_", "") for o in ops for d in o.input_dtypes}
    wide = sorted(d for d in dtypes if any(w in d for w in _WIDE_DTYPES))
    if wide:
        out.append(
            f"inputs in {', '.join(wide)}: AI Core has no kernel for them; cast to int32 / fp32 "
            "(or bf16) upstream, before the tensor reaches the NPU"
        )
    types = {o.op_type for o in ops}
    if "Cast" in types:
        out.append(
            "Cast runs on AI CPU for a dtype pair AI Core lacks: check the dtypes of its inputs "
            f"({', '.join(sorted(dtypes)) or 'see Input Data Types'}) and cast once on the host"
        )
    if {"ArgSort", "ArgSortV2", "Sort"} & types:
        out.append("ArgSort/Sort on AI CPU: use torch.topk (TopK runs on AI Core) instead")
    if any(len(o.input_shapes) > 1 for o in ops):
        out.append(
            "the same operator runs with several input shapes (dynamic shapes): pad inputs to a "
            "few bucket sizes or enable static shapes / graph mode so kernels are compiled once"
        )
    return out
