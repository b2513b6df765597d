"""FWK-KV-001: KV-cache paging fits the Ascend kernels, leaves headroom and holds a full request."""

from __future__ import annotations

from typing import Any

from ascend_audit.context import Context
from ascend_audit.facts.framework_inputs import kv_tokens
from ascend_audit.model import Evidence, Outcome, fail, passed, skip, warn, worst
from ascend_audit.registry import check

from .inputs import (
    cannot_judge,
    configs,
    hit_evidence,
    item_evidence,
    logs,
    serving_env,
    unless_dead,
)

_FATAL_KV = {
    "no_kv_memory": "no memory left for the KV cache",
    "memory_profiling_error": "memory profiling failed (another process on the NPU?)",
    "npu_oom": "NPU out of memory",
}


def _block(size: int, engine: str, ev: Evidence) -> Outcome:
    if engine == "mindie":
        if size == 128:
            return passed(f"cacheBlockSize 128 ({ev.source})", [ev])
        return warn(f"cacheBlockSize {size} ({ev.source}); MindIE recommends 128", [ev])
    if size % 128 == 0:
        return passed(f"block_size {size} ({ev.source})", [ev])
    return fail(
        f"block_size {size} ({ev.source}) is not a multiple of 128, the only kernel block size "
        "of the Ascend attention backends",
        [ev],
        "Set --block-size 128 (or leave it unset: vllm-ascend then uses 128).",
    )


def _block_sizes(cfgs: list[Any], scans: list[Any]) -> list[Outcome]:
    out = []
    for cfg in cfgs:
        item = cfg.item("cacheBlockSize") or cfg.item("block_size")
        if cfg.block_size is not None and item:
            out.append(_block(cfg.block_size, cfg.engine or "vllm", item_evidence(item)))
    for f in scans:
        hit = f.last("kernel_block_size_mismatch") or f.last("config_block_size")
        if f.block_size is not None and hit:
            out.append(_block(f.block_size, "vllm", hit_evidence(hit)))
    return out


def _share(ctx: Context, what: str, value: float, ev: Evidence) -> Outcome:
    warn_at = ctx.policy["framework.memory_utilization_warn"]
    fail_at = ctx.policy["framework.memory_utilization_fail"]
    text = f"{what} {value:g} ({ev.source})"
    fix = f"Lower {what} to {warn_at:g} or less: graph capture and activations need the rest."
    if value >= fail_at:
        return fail(f"{text} leaves no headroom (fails at {fail_at:g})", [ev], fix)
    if value > warn_at:
        return warn(f"{text} leaves little headroom (warns above {warn_at:g})", [ev], fix)
    return passed(text, [ev])


def _memory(ctx: Context, cfgs: list[Any], scans: list[Any]) -> list[Outcome]:
    out = []
    for cfg in cfgs:
        item = cfg.item("gpu_memory_utilization")
        if cfg.gpu_memory_utilization is not None and item:
            out.append(
                _share(
                    ctx, "gpu_memory_utilization", cfg.gpu_memory_utilization, item_evidence(item)
                )
            )
        item = cfg.item("npuMemSize")
        if cfg.npu_mem_size == 0 and item:
            out.append(
                fail(
                    f"npuMemSize 0 ({item.source}:{item.lineno}) is invalid",
                    [item_evidence(item)],
                    "Set npuMemSize to -1 (size the KV cache automatically) or to GB per NPU.",
                )
            )
        elif cfg.npu_mem_size is not None and item:
            how = (
                "sized automatically"
                if cfg.npu_mem_size < 0
                else f"fixed at {cfg.npu_mem_size} GB per NPU"
            )
            out.append(
                passed(f"npuMemSize {cfg.npu_mem_size}: KV cache {how}", [item_evidence(item)])
            )
    for f in scans:
        hit = f.last("config_gpu_memory_utilization")
        if f.gpu_memory_utilization is not None and hit and not out:
            out.append(
                _share(ctx, "gpu_memory_utilization", f.gpu_memory_utilization, hit_evidence(hit))
            )
    for name, value, src in serving_env(ctx):
        if name == "NPU_MEMORY_FRACTION":
            try:
                share = float(value)
            except ValueError:
                continue
            out.append(_share(ctx, name, share, Evidence("config", src, f"{name}={value}")))
    return out


def _need(ctx: Context, cfgs: list[Any], f: Any) -> int | None:
    """The longest request the KV cache must hold: policy, else the served max_model_len."""
    return (
        ctx.policy["framework.max_model_len"]
        or next((c.max_model_len for c in cfgs if c.max_model_len), None)
        or f.max_model_len
        or f.max_concurrency_tokens
    )


def _capacity(ctx: Context, cfgs: list[Any], scans: list[Any]) -> list[Outcome]:
    out = []
    for f in scans:
        for sig, text in _FATAL_KV.items():
            hit = f.last(sig)
            if hit:
                out.append(fail(f"{text} ({hit.source}:{hit.lineno})", [hit_evidence(hit)]))
        neg = f.last("available_kv_gib")
        if neg and isinstance(neg.value, float) and neg.value < 0:
            out.append(
                fail(
                    f"available KV cache memory {neg.value} GiB ({neg.source}:{neg.lineno})",
                    [hit_evidence(neg)],
                )
            )
        tokens, need = kv_tokens(f), _need(ctx, cfgs, f)
        hit = f.last("kv_cache_tokens") or f.last("npu_blocks") or f.last("max_concurrency")
        if tokens is None or hit is None:
            continue
        ev = [hit_evidence(hit, kv_tokens=tokens, max_model_len=need)]
        blocks = f" ({f.npu_blocks} NPU blocks)" if f.npu_blocks is not None else ""
        text = f"KV cache holds {tokens:,} tokens{blocks} ({hit.source}:{hit.lineno})"
        if need and tokens < need:
            out.append(
                fail(
                    f"{text}: less than one {need:,}-token request",
                    ev,
                    "Raise gpu_memory_utilization / npuMemSize, use more NPUs (TP), "
                    "or lower max_model_len.",
                )
            )
        else:
            ratio = f", {tokens / need:.1f}× max_model_len {need:,}" if need else ""
            out.append(passed(text + ratio, ev))
    return out


def _alloc(ctx: Context, scans: list[Any]) -> list[Outcome]:
    """PYTORCH_NPU_ALLOC_CONF: max_split_size_mb / garbage_collection_threshold keep
    vllm-ascend from enabling expandable segments."""
    seen = [
        (v, src, Evidence("config", src, f"PYTORCH_NPU_ALLOC_CONF={v}"))
        for k, v, src in serving_env(ctx)
        if k == "PYTORCH_NPU_ALLOC_CONF"
    ]
    for f in scans:
        hit = f.last("alloc_conf")
        if hit and isinstance(hit.value, str):
            seen.append((hit.value, f"{hit.source}:{hit.lineno}", hit_evidence(hit)))
    out = []
    for value, src, ev in seen:
        low = value.replace(" ", "").lower()
        bad = [k for k in ("max_split_size_mb", "garbage_collection_threshold") if k in low]
        if bad or "expandable_segments:false" in low:
            why = ", ".join(bad) or "expandable_segments:False"
            out.append(
                warn(
                    f"PYTORCH_NPU_ALLOC_CONF={value} ({src}): {why} fragments the KV pool",
                    [ev],
                    "Use PYTORCH_NPU_ALLOC_CONF=expandable_segments:True.",
                )
            )
        else:
            out.append(passed(f"PYTORCH_NPU_ALLOC_CONF={value}", [ev]))
    return out


@check("FWK-KV-001")
def kv_cache_paging(ctx: Context) -> Outcome:
    unusable = cannot_judge(ctx)
    if unusable:
        return unusable
    cfgs, scans = configs(ctx), logs(ctx)
    findings = [
        *_block_sizes(cfgs, scans),
        *_memory(ctx, cfgs, scans),
        *_capacity(ctx, cfgs, scans),
        *_alloc(ctx, scans),
    ]
    if not findings:
        return skip("no block size, memory share or KV capacity in the serving configs or logs")
    return unless_dead(ctx, worst(findings, "; ".join(o.summary for o in findings[:3])))
