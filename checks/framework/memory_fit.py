"""Memory fit before the first start: weights per card + KV for one full sequence + reserve."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ascend_audit.context import Context
from ascend_audit.facts.driver_scan import NPU_SMI
from ascend_audit.facts.framework_inputs import PROBE
from ascend_audit.facts.model_shape import MODEL_FOOTPRINT, dtype_bytes
from ascend_audit.model import Evidence, Outcome, fail, passed, skip
from ascend_audit.registry import check

from .inputs import configs, item_evidence, logs, optional_fact

GIB = 1 << 30
VLLM_UTIL = 0.9  # vLLM's --gpu-memory-utilization default (vllm-ascend FAQ)
MINDIE_FRACTION = 0.8  # MindIE's NPU_MEMORY_FRACTION default (MindIE-LLM FAQ)


@dataclass
class Plan:
    """What the service asks for: parallel split, context length, memory share, KV dtype."""

    source: str
    engine: str
    tp: int = 1
    pp: int = 1
    max_model_len: int | None = None
    len_how: str = ""
    max_num_seqs: int | None = None
    util: float = VLLM_UTIL
    util_how: str = ""
    kv_dtype: str | None = None
    kv_fixed_bytes: int | None = None
    evidence: list[Evidence] | None = None


def _i(v: Any) -> int | None:
    if isinstance(v, bool):
        return None
    if isinstance(v, int):
        return v
    if isinstance(v, str) and v.strip().isdigit():
        return int(v.strip())
    return None


def _plan(ctx: Context) -> Plan | None:
    """The serving plan from the first serving config, filled in from serving logs."""
    ev: list[Evidence] = []
    cfg = next((c for c in configs(ctx) if c.engine in ("vllm", "mindie")), None)
    flogs = logs(ctx)
    if cfg is None and not flogs:
        return None
    if cfg is not None and cfg.engine == "mindie":
        p = Plan(cfg.source, "mindie", tp=cfg.world_size or 1)
        p.max_model_len, p.len_how = cfg.max_model_len, "maxSeqLen"
        raw = cfg.env.get("NPU_MEMORY_FRACTION")
        try:
            p.util = float(raw) if raw else MINDIE_FRACTION
        except ValueError:
            p.util = MINDIE_FRACTION
        p.util_how = f"NPU_MEMORY_FRACTION={raw}" if raw else "NPU_MEMORY_FRACTION default 0.8"
        if cfg.npu_mem_size and cfg.npu_mem_size > 0:
            p.kv_fixed_bytes = cfg.npu_mem_size * GIB
        keys: tuple[str, ...] = ("worldSize", "maxSeqLen", "npuMemSize")
    elif cfg is not None:
        o = cfg.options
        p = Plan(cfg.source, "vllm", tp=cfg.tensor_parallel_size or 1)
        p.pp = _i(o.get("pipeline_parallel_size")) or 1
        if cfg.max_model_len:
            p.max_model_len, p.len_how = cfg.max_model_len, "--max-model-len"
        p.max_num_seqs = _i(o.get("max_num_seqs"))
        if cfg.gpu_memory_utilization is not None:
            p.util, p.util_how = cfg.gpu_memory_utilization, "--gpu-memory-utilization"
        else:
            p.util_how = f"--gpu-memory-utilization default {VLLM_UTIL}"
        kvd = o.get("kv_cache_dtype")
        p.kv_dtype = str(kvd) if kvd and str(kvd) != "auto" else (str(o.get("dtype") or "") or None)
        p.kv_fixed_bytes = cfg.kv_cache_memory_bytes
        keys = (
            "tensor_parallel_size",
            "pipeline_parallel_size",
            "max_model_len",
            "gpu_memory_utilization",
            "max_num_seqs",
        )
    else:
        f = flogs[0]
        p = Plan(f.source, "vllm", tp=f.tensor_parallel_size or 1)
        p.util_how = f"--gpu-memory-utilization default {VLLM_UTIL}"
        keys = ()
    if cfg is not None:
        for k in keys:
            it = cfg.item(k)
            if it is not None:
                ev.append(item_evidence(it))
    for f in flogs:
        if p.max_model_len is None and f.max_model_len:
            p.max_model_len, p.len_how = f.max_model_len, f"max_model_len in {f.source}"
        if f.gpu_memory_utilization is not None and not p.util_how.startswith("--gpu"):
            p.util, p.util_how = f.gpu_memory_utilization, f"gpu_memory_utilization in {f.source}"
        if cfg is None and f.tensor_parallel_size:
            p.tp = f.tensor_parallel_size
    p.evidence = ev
    return p


def _hbm(ctx: Context) -> tuple[int | None, str, list[Evidence]]:
    run = optional_fact(ctx, NPU_SMI)
    info = getattr(run, "info", None)
    chips = info.chips if info is not None else ()
    hbm = [c.hbm_total_mb for c in chips if c.hbm_total_mb]
    mem = [c.memory_total_mb for c in chips if c.memory_total_mb]
    res = getattr(run, "result", None)
    ev = [res.evidence(excerpt=(res.stdout or "")[:1500])] if res is not None and res.ok else []
    if hbm:
        return min(hbm) << 20, f"npu-smi info: HBM {min(hbm)} MB per chip", ev
    if mem:
        return min(mem) << 20, f"npu-smi info: memory {min(mem)} MB per chip", ev
    probe = optional_fact(ctx, PROBE)
    pf = getattr(probe, "facts", None)
    totals = [m[1] for m in getattr(pf, "mem_info", ()) or () if m]
    if totals:
        return min(totals), "the probe's torch.npu.mem_get_info", []
    return None, "", ev


def _g(n: float) -> str:
    return f"{n / GIB:.2f} GiB"


def _measured(ctx: Context, kv_seq: int | None, plan: Plan | None) -> Outcome | None:
    """The log's `Available KV cache memory` against one full-length sequence's KV."""
    for f in logs(ctx):
        hit = f.last("available_kv_gib")
        if hit is None or f.available_kv_gib is None:
            continue
        avail = f.available_kv_gib * GIB
        ev = [
            Evidence(
                "log",
                f"{hit.source}:{hit.lineno}",
                hit.text,
                {"available_kv_gib": f.available_kv_gib},
            )
        ]
        if avail <= 0:
            return fail(
                f"{hit.source}:{hit.lineno}: Available KV cache memory "
                f"{f.available_kv_gib:.2f} GiB: the weights and activations already fill "
                "the memory share",
                ev,
            )
        if kv_seq is None:
            return passed(
                f"measured: {f.available_kv_gib:.2f} GiB for the KV cache "
                f"({hit.source}:{hit.lineno}); one sequence's need unknown (no model config)",
                ev,
                available_kv_bytes=int(avail),
            )
        length = plan.max_model_len if plan else None
        seqs = int(avail // kv_seq) if kv_seq else 0
        text = (
            f"measured: Available KV cache memory {f.available_kv_gib:.2f} GiB "
            f"({hit.source}:{hit.lineno}) vs {_g(kv_seq)} for one {length}-token sequence"
        )
        if avail < kv_seq:
            return fail(text + ": not even one full-length request fits", ev)
        return passed(f"{text}: {seqs} full-length sequences fit", ev, full_sequences=seqs)
    return None


@check("FWK-MEMFIT-001")
def memory_fit(ctx: Context) -> Outcome:
    fp = ctx.fact(MODEL_FOOTPRINT)
    plan = _plan(ctx)
    shape = fp.shape
    reserve = float(ctx.policy["framework.memory_reserve_gib"]) * GIB
    kv_tok = kv_seq = None
    if plan is not None and shape is not None and shape.complete:
        kvb = dtype_bytes(plan.kv_dtype) or dtype_bytes(shape.dtype) or 2
        kv_tok = shape.kv_bytes_per_token(plan.tp, plan.pp, kvb)
        if plan.max_model_len is None and shape.max_positions:
            plan.max_model_len, plan.len_how = shape.max_positions, "max_position_embeddings"
        if kv_tok is not None and plan.max_model_len:
            kv_seq = kv_tok * plan.max_model_len
    measured = _measured(ctx, kv_seq, plan)
    if measured is not None:
        return measured
    if plan is None:
        return skip("no serving config or log: parallel sizes and context length unknown")
    if fp.path is None:
        return skip("no model directory known (--model-dir, the serving config's model path)")
    if fp.error and shape is None:
        return skip(f"model directory unreadable: {fp.error}")
    if fp.weights_bytes is None:
        return skip(f"{fp.path}: no safetensors index or weight files to size the weights")
    if kv_seq is None or kv_tok is None:
        why = "; ".join(shape.problems) if shape is not None else fp.error or "no config.json"
        return skip(f"{fp.path}: KV cache size unknown ({why})")
    assert shape is not None  # complete when kv_seq is known
    hbm, hbm_how, hbm_ev = _hbm(ctx)
    if hbm is None:
        return skip("HBM per chip unknown (no npu-smi info, no deep probe)")
    split = plan.tp * plan.pp
    weights = fp.weights_bytes / split
    budget = plan.util * hbm
    kv_need = kv_seq if plan.kv_fixed_bytes is None else max(kv_seq, plan.kv_fixed_bytes)
    need = weights + kv_need + reserve
    kv_text = (
        f"KV {_g(kv_seq)} for one {plan.max_model_len}-token sequence ({plan.len_how}; "
        f"{kv_tok / 1024:.1f} KiB/token per card: {shape.describe()})"
    )
    if plan.kv_fixed_bytes is not None:
        kv_text += f", fixed KV pool {_g(plan.kv_fixed_bytes)}"
    arith = (
        f"weights {_g(fp.weights_bytes)} ({fp.weights_how}) / (tp {plan.tp} x pp {plan.pp}) "
        f"= {_g(weights)} per card + {kv_text} + reserve {_g(reserve)} = {_g(need)} "
        f"vs {plan.util:g} ({plan.util_how}) x {_g(hbm)} ({hbm_how}) = {_g(budget)}"
    )
    room = budget - weights - reserve
    seqs = int(room // kv_seq) if room > 0 else 0
    values = {
        "weights_per_card_bytes": int(weights),
        "kv_bytes_per_token": kv_tok,
        "kv_one_sequence_bytes": kv_seq,
        "reserve_bytes": int(reserve),
        "budget_bytes": int(budget),
        "need_bytes": int(need),
        "full_sequences": seqs,
    }
    ev = [
        Evidence("config", plan.source, arith, values),
        Evidence("file", fp.path, f"{shape.describe()}; {fp.weights_how}", {"model": fp.origin}),
        *(plan.evidence or []),
        *hbm_ev,
    ]
    if need > budget:
        out = fail(f"does not fit: {arith}", ev)
        out.metrics.update(values)
        return out
    extra = f"; {seqs} full-length sequences fit"
    if plan.max_num_seqs:
        extra += f" (max_num_seqs {plan.max_num_seqs})"
    return passed(f"fits: {arith}{extra}", ev, **values)
