"""Facts from Ascend profiler output, read in bounded memory, one module per format:

- `kernels`: torch_npu kernel_details / msprof op_summary tables (through `columns` and
  `accumulate`), and merging ranks;
- `op_statistic`: op_statistic tables;
- `trace_view`: trace_view / msprof JSON timelines;
- `discovery`: finding every trace under a path and reading them all;
- `summaries`: the frozen facts they produce.
"""

from __future__ import annotations

from ascend_audit.facts.profiler.discovery import collect_profiler_facts, discover_traces
from ascend_audit.facts.profiler.kernels import merge_summaries, summarize_kernels
from ascend_audit.facts.profiler.op_statistic import parse_op_statistic
from ascend_audit.facts.profiler.summaries import (
    AI_CPU,
    BATCH_MATMUL_RE,
    FUSED_ATTENTION_RE,
    FUSED_RMSNORM_RE,
    RMSNORM_PIECES,
    SOFTMAX_RE,
    AiCpuOp,
    KernelSummary,
    OpStat,
    OpStatistic,
    OpStatisticRow,
    ProfilerFacts,
    RankTraces,
    TraceSource,
    TraceViewSummary,
)
from ascend_audit.facts.profiler.trace_view import summarize_trace_view

__all__ = [
    "AI_CPU",
    "BATCH_MATMUL_RE",
    "FUSED_ATTENTION_RE",
    "FUSED_RMSNORM_RE",
    "RMSNORM_PIECES",
    "SOFTMAX_RE",
    "AiCpuOp",
    "KernelSummary",
    "OpStat",
    "OpStatistic",
    "OpStatisticRow",
    "ProfilerFacts",
    "RankTraces",
    "TraceSource",
    "TraceViewSummary",
    "collect_profiler_facts",
    "discover_traces",
    "merge_summaries",
    "parse_op_statistic",
    "summarize_kernels",
    "summarize_trace_view",
]
