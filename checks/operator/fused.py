"""Fused kernels: attention and RMSNorm run as fused operators, not as their pieces."""

from __future__ import annotations

from collections.abc import Callable

from ascend_audit.context import Context
from ascend_audit.facts.operator_inputs import PROFILER, OperatorTraces
from ascend_audit.facts.profiler import (
    BATCH_MATMUL_RE,
    RMSNORM_PIECES,
    SOFTMAX_RE,
    KernelSummary,
    OpStat,
)
from ascend_audit.model import Outcome, passed, skip, warn, worst
from ascend_audit.registry import check

from .traces import NO_TRACE, trace_evidence, unreadable


@check("OPR-FUSED-001")
def fused_kernels(ctx: Context) -> Outcome:
    t: OperatorTraces = ctx.fact(PROFILER)
    if not t.given:
        return skip(NO_TRACE)
    if not t.readable or t.merged is None:
        return unreadable(t)
    m = t.merged
    has_attention = m.has_fused_attention or m.attention_sequences
    has_norm = m.has_fused_rmsnorm or m.rmsnorm_sequences
    if not has_attention and not has_norm:
        return skip("no attention or RMSNorm operator in the trace (not a transformer?)")
    metrics = {
        "fused_attention": {k: s.count for k, s in m.fused_attention},
        "fused_rmsnorm": {k: s.count for k, s in m.fused_rmsnorm},
        "attention_sequences": m.attention_sequences,
        "rmsnorm_sequences": m.rmsnorm_sequences,
    }
    found = [_attention(t, m), _rmsnorm(t, m)]
    ok = "; ".join(o.summary for o in found if o.summary)
    out = worst([o for o in found if o.summary], ok)
    out.metrics.update(metrics)
    if not out.evidence:
        out.evidence.append(trace_evidence(t, "", **metrics))
    return out


def _types(m: KernelSummary, pred: Callable[[str], bool]) -> str:
    return ", ".join(f"{k} ×{s.count} ({s.total_us:.0f} us)" for k, s in m.op_types if pred(k))


def _names(pairs: tuple[tuple[str, OpStat], ...]) -> str:
    return ", ".join(f"{k} ×{s.count}" for k, s in pairs)


def _attention(t: OperatorTraces, m: KernelSummary) -> Outcome:
    if m.attention_sequences:
        pieces = _types(m, lambda k: bool(BATCH_MATMUL_RE.match(k) or SOFTMAX_RE.match(k)))
        fused = _names(m.fused_attention)
        also = f" (fused kernels seen too: {fused})" if fused else ""
        return warn(
            f"attention runs decomposed: BatchMatMul → Softmax seen "
            f"{m.attention_sequences} time(s){also}",
            [trace_evidence(t, f"decomposed sequence: BatchMatMul → Softmax\n{pieces}")],
            "Route attention through the fused kernels: torch_npu.npu_fusion_attention / "
            "npu_prompt_flash_attention / npu_incre_flash_attention, or the serving engine's "
            "Ascend attention backend (vllm-ascend, MindIE) instead of an eager / math SDPA path.",
        )
    if m.fused_attention:
        return passed(f"attention runs fused ({_names(m.fused_attention)})")
    return passed("")


def _rmsnorm(t: OperatorTraces, m: KernelSummary) -> Outcome:
    if m.rmsnorm_sequences:
        pieces = _types(m, lambda k: k in RMSNORM_PIECES)
        return warn(
            f"RMSNorm runs decomposed: Pow → ReduceMean → Rsqrt seen {m.rmsnorm_sequences} "
            "time(s) instead of a fused RmsNorm kernel",
            [trace_evidence(t, f"decomposed sequence: Pow → ReduceMean → Rsqrt\n{pieces}")],
            "Use torch_npu.npu_rms_norm (or npu_add_rms_norm for residual + norm) in place of "
            "x * torch.rsqrt(x.pow(2).mean(-1)); serving engines do this in their Ascend layers.",
        )
    if m.fused_rmsnorm:
        return passed(f"RMSNorm runs fused ({_names(m.fused_rmsnorm)})")
    return passed("")
