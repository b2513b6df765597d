"""Weight integrity: every shard the index names is there and parses; sampled hashes match."""

from __future__ import annotations

from ascend_audit.context import Context
from ascend_audit.facts.framework_inputs import WEIGHTS_INTEGRITY
from ascend_audit.model import Evidence, Outcome, error, fail, skip, warn, worst
from ascend_audit.registry import check


@check("FWK-WGT-002")
def weights_integrity(ctx: Context) -> Outcome:
    w = ctx.fact(WEIGHTS_INTEGRITY)
    if not w.get("path"):
        return skip("no model directory: pass --model-dir DIR or set driver.weights_path")
    where = f"{w['path']} ({w['origin']})"
    r = w.get("result")
    if r is None:
        return skip(f"{where}: integrity result not recorded in this snapshot")
    if not r.get("exists"):
        if w["origin"] == "--model-dir":
            return fail(f"model directory {where} does not exist")
        return skip(f"model directory {where} not readable from here")
    if not r.get("shards"):
        return skip(f"{where}: no *.safetensors files (integrity covers safetensors only)")
    findings: list[Outcome] = []
    idx = r.get("index")
    if idx is None and r["shards"] > 1:
        findings.append(warn("several shards but no model.safetensors.index.json"))
    if idx:
        for m in idx["missing"][:5]:
            findings.append(fail(f"shard {m} named by the index is missing"))
        for p in idx["problems"][:5]:
            findings.append(fail(f"index: {p}"))
        if idx["extra"]:
            findings.append(
                warn(
                    f"{len(idx['extra'])} shard(s) not in the index: {', '.join(idx['extra'][:3])}"
                )
            )
    for name, h in r["headers"].items():
        if not h["ok"]:
            findings.append(fail(f"{name}: {'; '.join(h['problems'][:2])}"))
    findings += _verified(w, r)
    gb = r["total_bytes"] / 1e9
    metrics = {
        "shards": r["shards"],
        "total_gb": round(gb, 3),
        "bytes_read": r["bytes_read"],
        "seconds": r["seconds"],
        "throughput_mb_s": r["throughput_mb_s"],
    }
    checked = "sampled hashes match the manifest" if r.get("verify") else "headers parse"
    out = worst(findings, f"{r['shards']} shards, {gb:.2f} GB: all present, {checked}")
    text = "\n".join(
        f"{n}: {h['file_size']} bytes, {h['tensors']} tensors"
        for n, h in list(r["headers"].items())[:20]
    )
    out.evidence = [Evidence("file", w["path"], text, {"origin": w["origin"], **metrics})]
    out.metrics = metrics
    return out


def _verified(w: dict, r: dict) -> list[Outcome]:
    """Findings of --verify-weights."""
    if not w.get("verify_requested"):
        return []
    if r.get("manifest_error"):
        return [error(f"--verify-weights: {r['manifest_error']}")]
    v = r.get("verify") or {}
    out = [fail(f) for f in v.get("findings", [])[:8]]
    out += [error(p) for p in v.get("problems", [])[:3]]
    return out
