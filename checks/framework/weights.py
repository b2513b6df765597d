"""FWK-WGT-001: weights sit in NPU memory, in safetensors, and load fast enough."""

from __future__ import annotations

from typing import Any

from ascend_audit.context import Context
from ascend_audit.facts.framework_inputs import MODEL_DIRS
from ascend_audit.facts.storage import WEIGHTS_STORAGE
from ascend_audit.model import Evidence, Outcome, fail, passed, skip, warn, worst
from ascend_audit.registry import check

from .inputs import (
    cannot_judge,
    configs,
    hit_evidence,
    item_evidence,
    logs,
    optional_fact,
    unless_dead,
)

NETWORK_GBPS = 1.0  # a planning figure for one node reading from network storage
_PT_SUFFIXES = (".bin", ".pt", ".pth")
_OFFLOAD_FIX = "Remove --cpu-offload-gb (use more NPUs or a quantized model) and load real weights."


def _placement(cfg_items: list[tuple[str, Any, Evidence]]) -> list[Outcome]:
    """cpu offload, dummy weights, CPU device, pt format — from configs and log config lines."""
    out = []
    for key, value, ev in cfg_items:
        if key == "cpu_offload_gb" and isinstance(value, (int, float)) and value > 0:
            out.append(
                fail(
                    f"--cpu-offload-gb {value:g} ({ev.source}) keeps weights in host memory",
                    [ev],
                    _OFFLOAD_FIX,
                )
            )
        elif key == "load_format" and value == "dummy":
            out.append(
                fail(
                    f"load_format dummy ({ev.source}): random weights, not the model",
                    [ev],
                    _OFFLOAD_FIX,
                )
            )
        elif key == "device" and value == "cpu":
            out.append(
                fail(f"device cpu ({ev.source}): the model runs on the host", [ev], _OFFLOAD_FIX)
            )
        elif key == "load_format" and value == "pt":
            out.append(
                warn(
                    f"load_format pt ({ev.source}): .bin/.pt shards load slower than safetensors",
                    [ev],
                )
            )
    return out


def _items(cfgs: list[Any], scans: list[Any]) -> list[tuple[str, Any, Evidence]]:
    out: list[tuple[str, Any, Evidence]] = []
    for cfg in cfgs:
        for key in ("cpu_offload_gb", "load_format", "device"):
            item = cfg.item(key)
            if item is not None:
                out.append((key, getattr(cfg, key), item_evidence(item)))
    for f in scans:
        for key in ("cpu_offload_gb", "load_format"):
            hit = f.last(f"config_{key}")
            if hit is not None:
                out.append((key, getattr(f, key), hit_evidence(hit)))
    return out


def _pt_shards(ctx: Context, cfgs: list[Any], scans: list[Any]) -> list[Outcome]:
    out = []
    for f in scans:
        hit = f.last("checkpoint_format")
        if hit and hit.value == "pt":
            out.append(
                warn(
                    f"loading pt checkpoint shards, not safetensors ({hit.source}:{hit.lineno})",
                    [hit_evidence(hit)],
                    "Convert the checkpoint to safetensors.",
                )
            )
    paths = [c.model_path for c in cfgs if c.model_path] + [
        f.model_path for f in scans if f.model_path
    ]
    dirs = ctx.fact(MODEL_DIRS)
    for path in dict.fromkeys(paths):
        found = dirs.get(path)
        names = list(found.names or ()) if found is not None else []
        pt = [n for n in names if n.endswith(_PT_SUFFIXES)]
        if pt and not any(n.endswith(".safetensors") for n in names):
            ev = Evidence("file", path, "\n".join(names[:20]), {"pt_shards": len(pt)})
            out.append(
                warn(
                    f"{path} holds {len(pt)} .bin/.pt shards and no safetensors",
                    [ev],
                    "Convert the checkpoint to safetensors.",
                )
            )
    return out


def _dir_gb(ctx: Context, path: str) -> float | None:
    """The weights directory's size as gathered (measured when it is on network storage)."""
    found = ctx.fact(MODEL_DIRS).get(path)
    return found.size_gb if found is not None else None


def _network(ctx: Context, scans: list[Any]) -> list[Outcome]:
    """Weights on NFS / Lustre / …: a load-time estimate from their size (driver-layer fact)."""
    ws = optional_fact(ctx, WEIGHTS_STORAGE)
    loc = ws.location if ws is not None else None
    # NVMe-oF is networked too, but it is the fast path the driver layer recommends.
    if ws is None or loc is None or not loc.is_network or loc.kind == "nvme-of":
        return []
    path = ws.weights.path or ""
    gb = next((f.weights_gb for f in scans if f.weights_gb), None) or _dir_gb(ctx, path)
    est = (
        f"; ~{gb:.0f} GB → ~{gb / NETWORK_GBPS:.0f} s at ~{NETWORK_GBPS:g} GB/s per start"
        if gb
        else ""
    )
    ev = Evidence(
        "file",
        path,
        f"{loc.kind} {loc.source or ''} on {loc.mount_point or '?'}",
        {"kind": loc.kind, "fstype": loc.fstype, "size_gb": gb},
    )
    return [
        warn(
            f"weights at {path} are on network storage ({loc.kind}){est}",
            [ev],
            "Copy the weights to local NVMe (or NVMe-oF), or use "
            "--safetensors-load-strategy eager / prefetch.",
        )
    ]


# Planning read rates (GB/s) per storage kind the driver layer finds; the budget is three times
# the time at that rate plus two minutes of fixed start-up. Without a size: 20 minutes.
_READ_GBPS = {"nvme-local": 1.5, "nvme-of": 1.0, "block-other": 0.4}
_NETWORK_GBPS = 0.25
_DEFAULT_GBPS = 0.4
_NO_SIZE_BUDGET_S = 1200.0


def _budget(ctx: Context, f: Any) -> tuple[float, str]:
    """The load-time budget for one log when the policy sets none: from size and storage."""
    ws = optional_fact(ctx, WEIGHTS_STORAGE)
    loc = getattr(ws, "location", None)
    kind = getattr(loc, "kind", None) or "unknown"
    if kind in _READ_GBPS:
        rate = _READ_GBPS[kind]
    elif getattr(loc, "is_network", False):
        rate = _NETWORK_GBPS
    else:
        rate = _DEFAULT_GBPS
    gib = f.last("checkpoint_gib")
    gb = f.weights_gb or (float(gib.value) * 1.074 if gib is not None else None)
    if not gb:
        return _NO_SIZE_BUDGET_S, "no model size in the log: a 20-minute default budget"
    budget = 120.0 + 3 * gb / rate
    return budget, (
        f"budget {budget:.0f} s for {gb:.1f} GB on {kind} storage "
        f"(~{rate:g} GB/s planning rate, ×3, + 120 s)"
    )


def _load_time(ctx: Context, scans: list[Any]) -> list[Outcome]:
    limit = ctx.policy["framework.max_load_seconds"]
    out = []
    for f in scans:
        hit = f.last("weights_load_seconds") or f.last("model_loading")
        hit = hit or f.last("weights_progress")
        secs = f.weights_load_seconds
        if hit is None or secs is None:
            continue
        gb = f.weights_gb
        rate = f", {gb:.1f} GB at {gb / secs:.2f} GB/s" if gb and secs > 0 else ""
        ev = [hit_evidence(hit, seconds=secs, gb=gb)]
        size = f.last("weights_gb")
        if size is not None and size.lineno != hit.lineno:
            ev.append(hit_evidence(size))
        text = f"weights loaded in {secs:g} s{rate} ({hit.source}:{hit.lineno})"
        if limit and secs > limit:
            out.append(
                fail(
                    f"{text}; policy allows {limit:g} s",
                    ev,
                    "Put the weights on local NVMe or raise the read throughput.",
                )
            )
            continue
        if not limit:
            budget, why = _budget(ctx, f)
            if secs > budget:
                out.append(
                    warn(
                        f"{text}: slower than expected ({why})",
                        ev,
                        "Put the weights on local NVMe (or NVMe-oF), use "
                        "--safetensors-load-strategy eager/prefetch on network storage, or set "
                        "framework.max_load_seconds in the policy.",
                        load_budget_s=round(budget),
                    )
                )
                continue
        out.append(passed(text, ev))
    return out


@check("FWK-WGT-001")
def weight_placement(ctx: Context) -> Outcome:
    unusable = cannot_judge(ctx)
    if unusable:
        return unusable
    cfgs, scans = configs(ctx), logs(ctx)
    findings = [
        *_placement(_items(cfgs, scans)),
        *_pt_shards(ctx, cfgs, scans),
        *_network(ctx, scans),
        *_load_time(ctx, scans),
    ]
    if not findings:
        return skip("no weight-loading setting or loading line in the serving configs or logs")
    ok = next(
        (o.summary for o in reversed(findings) if o.status.value == "PASS"),
        "weights load in NPU memory from safetensors",
    )
    return unless_dead(ctx, worst(findings, ok))
