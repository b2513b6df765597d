"""What profiler output summarises to (frozen facts), and the kernel names it recognises."""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

AI_CPU = "AI_CPU"
NA = "N/A"
MAX_PROBLEMS = 50
MAX_AICPU_KEYS = 10_000  # distinct (type, name) AI CPU operators kept; more are folded per type
MAX_TYPES = 20_000  # distinct operator types kept per summary
MAX_SAMPLES = 3
FUSED_ATTENTION_RE = re.compile(
    r"FlashAttention|FusedInferAttention|PagedAttention|IncreFlashAttention|PromptFlashAttention"
    r"|npu_fusion_attention|FusionAttention|FusedAttention|MultiHeadAttention|MlaProlog",
    re.IGNORECASE,
)
BATCH_MATMUL_RE = re.compile(r"^BatchMatMul(V\d+)?$")
SOFTMAX_RE = re.compile(r"^Softmax(V\d+)?$")
FUSED_RMSNORM_RE = re.compile(r"RmsNorm", re.IGNORECASE)
RMSNORM_PIECES = ("Pow", "ReduceMean", "ReduceMeanD", "Rsqrt", "Square")
SEQUENCE_TYPES_RE = re.compile(r"^(BatchMatMul(V\d+)?|Softmax(V\d+)?|Pow|ReduceMeanD?|Rsqrt)$")


# --------------------------------------------------------------------------- dataclasses


@dataclass(frozen=True)
class OpStat:
    """Count and total device time (us) of a group of kernels."""

    count: int = 0
    total_us: float = 0.0

    @property
    def mean_us(self) -> float:
        return self.total_us / self.count if self.count else 0.0

    def __add__(self, other: OpStat) -> OpStat:
        return OpStat(self.count + other.count, self.total_us + other.total_us)

    def to_dict(self) -> dict[str, Any]:
        return {
            "count": self.count,
            "total_us": round(self.total_us, 3),
            "mean_us": round(self.mean_us, 3),
        }


@dataclass(frozen=True)
class AiCpuOp:
    """An operator that ran on AI CPU: per type (name None) or per (type, name)."""

    op_type: str
    name: str | None
    count: int
    total_us: float
    input_dtypes: tuple[str, ...] = ()
    input_shapes: tuple[str, ...] = ()

    @property
    def mean_us(self) -> float:
        return self.total_us / self.count if self.count else 0.0

    def to_dict(self) -> dict[str, Any]:
        return {
            "op_type": self.op_type,
            "name": self.name,
            "count": self.count,
            "total_us": round(self.total_us, 3),
            "mean_us": round(self.mean_us, 3),
            "input_dtypes": list(self.input_dtypes),
            "input_shapes": list(self.input_shapes),
        }


def _pairs_dict(pairs: Iterable[tuple[str, OpStat]]) -> dict[str, Any]:
    return {k: v.to_dict() for k, v in pairs}


@dataclass(frozen=True)
class KernelSummary:
    """What one kernel table (or several merged) says about where device time went."""

    source: str
    layout: str
    columns: tuple[str, ...] = ()
    rows: int = 0
    total_us: float = 0.0
    cores: tuple[tuple[str, OpStat], ...] = ()
    op_types: tuple[tuple[str, OpStat], ...] = ()
    ai_cpu_by_type: tuple[AiCpuOp, ...] = ()
    ai_cpu_by_name: tuple[AiCpuOp, ...] = ()
    transdata: OpStat = OpStat()
    cast: OpStat = OpStat()
    format_cast: OpStat = OpStat()
    fused_attention: tuple[tuple[str, OpStat], ...] = ()
    batch_matmul: OpStat = OpStat()
    softmax: OpStat = OpStat()
    attention_sequences: int = 0
    fused_rmsnorm: tuple[tuple[str, OpStat], ...] = ()
    rmsnorm_pieces: tuple[tuple[str, OpStat], ...] = ()
    rmsnorm_sequences: int = 0
    ranks: tuple[str, ...] = ()
    problems: tuple[str, ...] = ()

    def core(self, name: str) -> OpStat:
        """Stats of one accelerator core (AI_CORE, AI_CPU, ...); empty when absent."""
        return dict(self.cores).get(name, OpStat())

    @property
    def ai_cpu(self) -> OpStat:
        return self.core(AI_CPU)

    @property
    def ai_cpu_share(self) -> float:
        """Fraction of total device time spent on AI CPU (0..1)."""
        return self.ai_cpu.total_us / self.total_us if self.total_us > 0 else 0.0

    @property
    def has_fused_attention(self) -> bool:
        return any(s.count for _, s in self.fused_attention)

    @property
    def has_fused_rmsnorm(self) -> bool:
        return any(s.count for _, s in self.fused_rmsnorm)

    @property
    def readable(self) -> bool:
        """True when a known layout was detected and at least the header was read."""
        return self.layout not in ("", "unknown")

    def to_dict(self) -> dict[str, Any]:
        return {
            "source": self.source,
            "layout": self.layout,
            "columns": list(self.columns),
            "rows": self.rows,
            "total_us": round(self.total_us, 3),
            "cores": _pairs_dict(self.cores),
            "op_types": _pairs_dict(self.op_types),
            "ai_cpu": self.ai_cpu.to_dict(),
            "ai_cpu_share": round(self.ai_cpu_share, 6),
            "ai_cpu_by_type": [o.to_dict() for o in self.ai_cpu_by_type],
            "ai_cpu_by_name": [o.to_dict() for o in self.ai_cpu_by_name],
            "transdata": self.transdata.to_dict(),
            "cast": self.cast.to_dict(),
            "format_cast": self.format_cast.to_dict(),
            "fused_attention": _pairs_dict(self.fused_attention),
            "batch_matmul": self.batch_matmul.to_dict(),
            "softmax": self.softmax.to_dict(),
            "attention_sequences": self.attention_sequences,
            "fused_rmsnorm": _pairs_dict(self.fused_rmsnorm),
            "rmsnorm_pieces": _pairs_dict(self.rmsnorm_pieces),
            "rmsnorm_sequences": self.rmsnorm_sequences,
            "ranks": list(self.ranks),
            "problems": list(self.problems),
        }


@dataclass(frozen=True)
class OpStatisticRow:
    """One row of an op_statistic table."""

    op_type: str
    core: str
    count: int
    total_us: float

    def to_dict(self) -> dict[str, Any]:
        return {
            "op_type": self.op_type,
            "core": self.core,
            "count": self.count,
            "total_us": round(self.total_us, 3),
        }


@dataclass(frozen=True)
class OpStatistic:
    """An op_statistic table: per (operator type, core) counts and times."""

    source: str
    layout: str
    rows: tuple[OpStatisticRow, ...] = ()
    cores: tuple[tuple[str, OpStat], ...] = ()
    total_us: float = 0.0
    problems: tuple[str, ...] = ()

    @property
    def ai_cpu(self) -> tuple[OpStatisticRow, ...]:
        return tuple(r for r in self.rows if r.core == AI_CPU)

    def to_dict(self) -> dict[str, Any]:
        return {
            "source": self.source,
            "layout": self.layout,
            "rows": [r.to_dict() for r in self.rows],
            "cores": _pairs_dict(self.cores),
            "total_us": round(self.total_us, 3),
            "ai_cpu": [r.to_dict() for r in self.ai_cpu],
            "problems": list(self.problems),
        }


@dataclass(frozen=True)
class TraceViewSummary:
    """Counts taken from a Chrome-trace timeline (trace_view.json or msprof_*.json)."""

    source: str
    events: int = 0
    aclop_compile_execute: int = 0
    has_device_timeline: bool = False
    task_types: tuple[tuple[str, int], ...] = ()
    ai_cpu_tasks: tuple[tuple[str, int], ...] = ()
    categories: tuple[tuple[str, int], ...] = ()
    problems: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        return {
            "source": self.source,
            "events": self.events,
            "aclop_compile_execute": self.aclop_compile_execute,
            "has_device_timeline": self.has_device_timeline,
            "task_types": dict(self.task_types),
            "ai_cpu_tasks": dict(self.ai_cpu_tasks),
            "categories": dict(self.categories),
            "problems": list(self.problems),
        }


@dataclass(frozen=True)
class TraceSource:
    """One profiler file found under a user path, with the rank it belongs to."""

    path: str
    kind: str  # kernel_details | op_summary | op_statistic | trace_view | msprof_json
    rank: str

    def to_dict(self) -> dict[str, Any]:
        return {"path": self.path, "kind": self.kind, "rank": self.rank}


@dataclass(frozen=True)
class RankTraces:
    """Everything read for one rank."""

    rank: str
    kernels: KernelSummary | None = None
    op_statistic: OpStatistic | None = None
    trace_view: TraceViewSummary | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "rank": self.rank,
            "kernels": self.kernels.to_dict() if self.kernels else None,
            "op_statistic": self.op_statistic.to_dict() if self.op_statistic else None,
            "trace_view": self.trace_view.to_dict() if self.trace_view else None,
        }


@dataclass(frozen=True)
class ProfilerFacts:
    """All profiler output under one user path: per rank and merged."""

    path: str
    sources: tuple[TraceSource, ...] = ()
    ranks: tuple[RankTraces, ...] = ()
    merged: KernelSummary | None = None
    problems: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        return {
            "path": self.path,
            "sources": [s.to_dict() for s in self.sources],
            "ranks": [r.to_dict() for r in self.ranks],
            "merged": self.merged.to_dict() if self.merged else None,
            "problems": list(self.problems),
        }
