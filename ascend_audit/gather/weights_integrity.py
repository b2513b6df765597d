"""Weight integrity gatherer: shard index, safetensors headers, sampled hashes against a manifest.

Model files are big user inputs: they are never copied into a snapshot. The result (a JSON-able
dict) goes through `host.cached_fact`, which a recording keeps and a replay returns.
"""

from __future__ import annotations

import json
import os
import time
from typing import Any

from ascend_audit.context import Context, gatherer
from ascend_audit.facts.framework_inputs import WEIGHTS_INTEGRITY
from ascend_audit.safe_io import open_regular

INDEX = "model.safetensors.index.json"
MANIFEST_NAME = "ascend-audit-manifest.json"
MANIFEST_CAP = 64 * 1024 * 1024


def model_dir(ctx: Context) -> tuple[str | None, str, str | None]:
    """(node/user path, origin, local path) of the model directory to judge."""
    if ctx.inputs.model_dir:
        return ctx.inputs.model_dir, "--model-dir", ctx.inputs.model_dir
    from ascend_audit.gather.storage import find_weights_path

    w = find_weights_path(ctx)
    if not w.path:
        return None, "", None
    root = ctx.host.sysroot or "/"
    return w.path, w.origin, os.path.join(root, w.path.lstrip("/"))


def _manifest(ctx: Context, local_dir: str) -> tuple[str | None, Any, str | None]:
    """(path, manifest, error): --weights-manifest, else ascend-audit-manifest.json in the dir."""
    given = ctx.inputs.weights_manifest
    path = ctx.host.input_path(given) if given else None
    if given and path is None:
        return given, None, "no such file"
    path = path or os.path.join(local_dir, MANIFEST_NAME)
    if not os.path.isfile(path):
        return None, None, f"no manifest: pass --weights-manifest or put {MANIFEST_NAME} there"
    try:
        with open_regular(path) as fh:
            return given or path, json.loads(fh.read(MANIFEST_CAP)), None
    except (OSError, ValueError) as exc:
        return given or path, None, f"unreadable manifest: {exc}"[:300]


def _full_hash_bytes(manifest: Any) -> int | None:
    """Bytes a manifest asks to hash completely (its files with a full sha256), for progress."""
    files = manifest.get("files") if isinstance(manifest, dict) else None
    if not isinstance(files, dict):
        return None
    sizes = [
        w.get("size")
        for w in files.values()
        if isinstance(w, dict) and isinstance(w.get("sha256"), str)
    ]
    return sum(s for s in sizes if isinstance(s, int) and not isinstance(s, bool) and s > 0)


def compute(ctx: Context, local_dir: str, verify: bool) -> dict[str, Any]:
    """Index + headers (+ sampled hashes): bounded memory, headers and blocks only."""
    from ascend_audit.facts.weights import check_index, read_safetensors_header, verify_manifest
    from ascend_audit.progress import byte_progress

    t0 = time.perf_counter()
    if not os.path.isdir(local_dir):
        return {"exists": False}
    names = sorted(os.listdir(local_dir))
    shards = [n for n in names if n.endswith(".safetensors")]
    headers = {n: read_safetensors_header(os.path.join(local_dir, n)) for n in shards}
    index = None
    if INDEX in names:
        with open_regular(os.path.join(local_dir, INDEX)) as fh:
            index = check_index(names, fh.read(MANIFEST_CAP), headers).to_dict()
    out: dict[str, Any] = {
        "exists": True,
        "shards": len(shards),
        "index": index,
        "headers": {
            n: {
                "ok": h.ok,
                "problems": list(h.problems[:3]),
                "file_size": h.file_size,
                "tensors": len(h.tensors),
            }
            for n, h in headers.items()
        },
        "total_bytes": sum(h.file_size or 0 for h in headers.values()),
        "bytes_read": sum(8 + (h.header_len or 0) for h in headers.values()),
    }
    if verify:
        path, manifest, err = _manifest(ctx, local_dir)
        out["manifest"] = path
        out["manifest_error"] = err
        if manifest is not None:
            with byte_progress("verifying weights", _full_hash_bytes(manifest)) as advance:
                check = verify_manifest(local_dir, manifest, advance)
            d = check.to_dict()
            d["extra"] = [e for e in d["extra"] if e != MANIFEST_NAME]
            d["findings"] = [f for f in d["findings"] if not f.startswith(MANIFEST_NAME + ":")]
            out["verify"] = d
            out["bytes_read"] += check.bytes_read
    secs = time.perf_counter() - t0
    out["seconds"] = round(secs, 4)
    out["throughput_mb_s"] = round(out["bytes_read"] / secs / 1e6, 1) if secs > 0 else None
    return out


@gatherer(WEIGHTS_INTEGRITY, "framework")
def weights_integrity(ctx: Context) -> dict[str, Any]:
    """The model directory's integrity result, computed live or replayed from a snapshot."""
    path, origin, local = model_dir(ctx)
    base = {"path": path, "origin": origin}
    if not path or local is None:
        return base
    verify = ctx.inputs.verify_weights
    key = f"weights_integrity:{path}:{'verify' if verify else 'headers'}"
    result = ctx.host.cached_fact(key, lambda: compute(ctx, local, verify))
    return {**base, "result": result, "verify_requested": verify}
