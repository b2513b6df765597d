"""The operator layer's inputs as facts: every --trace read, and fallback findings per log."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from ascend_audit.facts.fallback_log import FallbackSummary
from ascend_audit.facts.keys import FactKey
from ascend_audit.facts.profiler import AiCpuOp, KernelSummary, ProfilerFacts, RankTraces

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


# facts as the report shows them


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


PROFILER: FactKey[OperatorTraces] = FactKey("profiler")
FALLBACK_LOGS: FactKey[ServingLogs] = FactKey("fallback_logs")
