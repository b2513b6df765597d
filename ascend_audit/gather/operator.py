"""Operator-layer gatherers: profiler traces (--trace) and fallback warnings in serving logs."""

from __future__ import annotations

import os
from typing import Any

from ascend_audit.context import Context, gatherer
from ascend_audit.facts.fallback_log import FallbackSummary
from ascend_audit.facts.framework_inputs import SERVING_LOGS
from ascend_audit.facts.operator_inputs import (
    FALLBACK_LOGS,
    PROFILER,
    TOP_OPS,
    OperatorTraces,
    ServingLogs,
    TraceInput,
    op_row,
    time_by_core,
)
from ascend_audit.facts.profiler import (
    ProfilerFacts,
    RankTraces,
    collect_profiler_facts,
    merge_summaries,
)
from ascend_audit.progress import byte_progress, tree_bytes


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
        with byte_progress(
            f"reading {os.path.basename(given) or given}", tree_bytes(local)
        ) as advance:
            facts = collect_profiler_facts(local, advance)
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


@gatherer(PROFILER, "operator")
def profiler(ctx: Context) -> OperatorTraces:
    """Every --trace, read through the host so snapshots replay it."""
    paths = [(p, ctx.host.input_path(p)) for p in ctx.inputs.traces]
    return read_traces(paths)


@gatherer(FALLBACK_LOGS, "operator")
def fallback_logs(ctx: Context) -> ServingLogs:
    """Fallback warnings of every --serving-log, from the one pass that reads each log."""
    out: list[tuple[str, FallbackSummary | None]] = []
    for item in ctx.fact(SERVING_LOGS):
        facts = item.facts
        out.append((item.path, facts.fallback if facts is not None else None))
    return ServingLogs(tuple(out))


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


def __getattr__(name: str) -> Any:
    """Names that moved to checks/operator/traces.py (issue 15); kept for this round's branches."""
    if name in ("NO_TRACE", "ops_table", "trace_evidence", "unreadable", "aicpu_remedies"):
        from ascend_audit.checks.operator import traces

        return getattr(traces, name)
    if name == "per_rank_shares":
        from ascend_audit.facts import operator_inputs

        return operator_inputs.per_rank_shares
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
