"""Operator-layer gatherers: profiler traces (--trace) and fallback warnings in serving logs."""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from typing import Any

from ascend_audit.context import Context, gatherer
from ascend_audit.facts.fallback_log import FallbackSummary
from ascend_audit.facts.profiler import (
    AiCpuOp,
    KernelSummary,
    ProfilerFacts,
    RankTraces,
    collect_profiler_facts,
    merge_summaries,
)
from ascend_audit.model import Evidence, Outcome, Status

NO_TRACE = "no profiler trace given (--trace)"
TOP_OPS = 10
# Problems that mean rows were lost, not just that a column was blank.
_DAMAGE_RE = re.compile(r"malformed|not a number|cannot|could not|truncated", re.I)


@dataclass(frozen=True)
class TraceInput:
    """One --trace argument: the path the user gave, where it is readable, what it holds."""

    given: str
    local: str | None
    facts: ProfilerFacts


@dataclass(frozen=True)
class OperatorTraces:
    """Every --trace read: per-rank tables, one merged kernel summary, and what went wrong."""

    inputs: tuple[TraceInput, ...] = ()
    ranks: tuple[RankTraces, ...] = ()
    merged: KernelSummary | None = None
    problems: tuple[str, ...] = ()

    @property
    def given(self) -> bool:
        return bool(self.inputs)

    @property
    def kernel_ranks(self) -> tuple[RankTraces, ...]:
        return tuple(r for r in self.ranks if r.kernels is not None and r.kernels.readable)

    @property
    def readable(self) -> bool:
        """True when at least one kernel table of a known layout with kernel rows was read."""
        return bool(self.kernel_ranks) and self.merged is not None and self.merged.rows > 0

    @property
    def unreadable_reason(self) -> str:
        """Why no kernel table could be used, naming the columns found when the layout is odd."""
        found = [p for r in self.ranks if r.kernels for p in r.kernels.problems]
        reasons = found or list(self.problems) or ["no kernel table found"]
        return "; ".join(reasons[:3])

    @property
    def damage(self) -> tuple[str, ...]:
        """Problems that mean rows of a readable table were lost (truncated, malformed)."""
        merged = self.merged.problems if self.merged else ()
        return tuple(p for p in merged if _DAMAGE_RE.search(p))

    @property
    def timelines(self) -> tuple[tuple[str, Any], ...]:
        """(rank, TraceViewSummary) of every rank that has a timeline JSON."""
        return tuple((r.rank, r.trace_view) for r in self.ranks if r.trace_view is not None)

    def source(self) -> str:
        return ", ".join(i.given for i in self.inputs)


@dataclass(frozen=True)
class ServingLogs:
    """Fallback findings per --serving-log, keyed by the path the user gave."""

    logs: tuple[tuple[str, FallbackSummary | None], ...] = ()

    @property
    def given(self) -> bool:
        return bool(self.logs)


def _rank_label(label: str, given: str, many: bool, taken: set[str]) -> str:
    out = label
    if many and (label == "default" or label in taken):
        out = f"{os.path.basename(os.path.normpath(given)) or given}:{label}"
    n = 2
    base = out
    while out in taken:
        out = f"{base}#{n}"
        n += 1
    taken.add(out)
    return out


def read_traces(host_paths: list[tuple[str, str | None]]) -> OperatorTraces:
    """Summarise each (given, local) trace path and merge every rank's kernel table."""
    from dataclasses import replace

    inputs: list[TraceInput] = []
    ranks: list[RankTraces] = []
    problems: list[str] = []
    taken: set[str] = set()
    many = len(host_paths) > 1
    for given, local in host_paths:
        if local is None:
            msg = f"{given}: no such file or directory"
            problems.append(msg)
            inputs.append(TraceInput(given, None, ProfilerFacts(given, problems=(msg,))))
            continue
        if os.path.isfile(local) and os.path.getsize(local) == 0:
            msg = f"{given}: empty file (0 bytes), nothing to read"
            problems.append(msg)
            inputs.append(TraceInput(given, local, ProfilerFacts(given, problems=(msg,))))
            continue
        facts = collect_profiler_facts(local)
        inputs.append(TraceInput(given, local, facts))
        problems.extend(p.replace(local, given) for p in facts.problems)
        if facts.sources and facts.merged is None:
            kinds = ", ".join(sorted({s.kind for s in facts.sources}))
            problems.append(f"{given}: found only {kinds}, which carry no per-kernel device time")
        for r in facts.ranks:
            label = _rank_label(r.rank, given, many, taken)
            kernels = replace(r.kernels, ranks=(label,)) if r.kernels else None
            ranks.append(replace(r, rank=label, kernels=kernels))
    tables = [r.kernels for r in ranks if r.kernels is not None and r.kernels.readable]
    merged = merge_summaries(tables) if tables else None
    return OperatorTraces(tuple(inputs), tuple(ranks), merged, tuple(problems))


@gatherer("profiler", "operator")
def profiler(ctx: Context) -> OperatorTraces:
    """Every --trace, read through the host so snapshots replay it."""
    paths = [(p, ctx.host.input_path(p)) for p in ctx.inputs.traces]
    return read_traces(paths)


@gatherer("fallback_logs", "operator")
def fallback_logs(ctx: Context) -> ServingLogs:
    """Fallback warnings of every --serving-log, from the one pass that reads each log."""
    out: list[tuple[str, FallbackSummary | None]] = []
    for item in ctx.fact("serving_logs"):
        facts = item.facts
        out.append((item.path, facts.fallback if facts is not None else None))
    return ServingLogs(tuple(out))


# --------------------------------------------------------------------------- helpers for checks


def op_row(o: AiCpuOp) -> dict[str, Any]:
    """One AI CPU operator as the report shows it."""
    return {
        "type": o.op_type,
        "name": o.name or o.op_type,
        "count": o.count,
        "total_us": round(o.total_us, 3),
        "mean_us": round(o.mean_us, 3),
        "input_dtypes": list(o.input_dtypes),
        "input_shapes": list(o.input_shapes),
    }


def time_by_core(s: KernelSummary) -> dict[str, float]:
    return {core: round(st.total_us, 3) for core, st in s.cores}


def per_rank_shares(t: OperatorTraces) -> dict[str, float]:
    return {r.rank: round(r.kernels.ai_cpu_share, 6) for r in t.kernel_ranks if r.kernels}


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
    base = {"ranks": [r.rank for r in t.kernel_ranks], "layouts": layouts}
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


def inventory(facts: dict[str, Any]) -> dict[str, Any]:
    """Ranks, device time per core, AI CPU share and top AI CPU operators of the traces read."""
    t = facts.get("profiler")
    if not isinstance(t, OperatorTraces) or t.merged is None:
        return {}
    return {
        "operator": {
            "ranks": [r.rank for r in t.kernel_ranks],
            "time_by_core_us": time_by_core(t.merged),
            "aicpu_share": round(t.merged.ai_cpu_share, 6),
            "top_aicpu_ops": [op_row(o) for o in t.merged.ai_cpu_by_name[:TOP_OPS]],
        }
    }
