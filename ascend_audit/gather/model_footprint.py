"""The served model's footprint: config.json shape plus weight bytes (index total or shard sizes).

The model directory is --model-dir (a user input, read locally and kept as a cached fact so a
snapshot replays it without copying weights), else the path a serving config, a serving log, or
the weights gatherer names (a node path, read through the Host: config.json, the index, and a
stat of each shard).
"""

from __future__ import annotations

import os
import posixpath
from typing import Any

from ascend_audit.context import Context, gatherer
from ascend_audit.facts.framework_inputs import SERVING_CONFIGS, SERVING_LOGS
from ascend_audit.facts.model_shape import (
    MODEL_FOOTPRINT,
    ModelFootprint,
    ModelShape,
    index_total_size,
    parse_model_config,
)
from ascend_audit.safe_io import open_regular

INDEX = "model.safetensors.index.json"
TEXT_CAP = 16 * 1024 * 1024
MAX_FILES = 20_000
WEIGHT_SUFFIXES = (".safetensors", ".bin", ".pt", ".gguf")


def _from_listing(
    config_text: str | None, index_text: str | None, sizes: dict[str, int]
) -> dict[str, Any]:
    shape = parse_model_config(config_text) if config_text is not None else None
    total = index_total_size(index_text) if index_text is not None else None
    how = f"{INDEX} metadata.total_size" if total else ""
    if total is None:
        for suffix in WEIGHT_SUFFIXES:
            shards = {n: s for n, s in sizes.items() if n.endswith(suffix)}
            if shards:
                total = sum(shards.values())
                how = f"sum of {len(shards)} *{suffix} file sizes"
                break
    return {
        "shape": shape.__dict__ if shape is not None else None,
        "weights_bytes": total,
        "weights_how": how,
        "config_found": config_text is not None,
    }


def _local(path: str) -> dict[str, Any]:
    """--model-dir read directly (a user input): config.json, index, shard sizes."""
    if not os.path.isdir(path):
        return {"error": f"{path}: not a directory"}

    def text(name: str) -> str | None:
        p = os.path.join(path, name)
        try:
            with open_regular(p) as fh:
                return fh.read(TEXT_CAP).decode("utf-8", errors="replace")
        except OSError:
            return None

    sizes = {}
    for name in sorted(os.listdir(path))[:MAX_FILES]:
        if name.endswith(WEIGHT_SUFFIXES):
            try:
                sizes[name] = os.stat(os.path.join(path, name)).st_size
            except OSError:
                continue
    return _from_listing(text("config.json"), text(INDEX), sizes)


def _node(ctx: Context, path: str) -> dict[str, Any]:
    """A node path read through the Host (replayable): config.json, index, shard stats."""
    names = ctx.host.listdir(path)
    if names is None:
        return {"error": f"{path}: not a directory on this node"}
    sizes = {}
    for name in names[:MAX_FILES]:
        if name.endswith(WEIGHT_SUFFIXES):
            st = ctx.host.stat(posixpath.join(path, name))
            if st is not None:
                sizes[name] = st.size
    cfg = ctx.host.read_text(posixpath.join(path, "config.json"))
    idx = ctx.host.read_text(posixpath.join(path, INDEX)) if INDEX in names else None
    return _from_listing(cfg.text, idx.text if idx is not None else None, sizes)


def _candidates(ctx: Context) -> list[tuple[str, str]]:
    out: list[tuple[str, str]] = []
    try:
        for cfg in ctx.fact(SERVING_CONFIGS).configs:
            if cfg.model_path:
                out.append((cfg.model_path, f"{cfg.source} (model path)"))
    except Exception:
        pass
    try:
        for i in ctx.fact(SERVING_LOGS):
            if i.facts is not None and i.facts.model_path and i.facts.model_path.startswith("/"):
                out.append((i.facts.model_path, f"{i.path} (model path)"))
    except Exception:
        pass
    try:
        from ascend_audit.gather.storage import find_weights_path

        w = find_weights_path(ctx)
        if w.path:
            out.append((w.path, w.origin))
    except Exception:
        pass
    return out


@gatherer(MODEL_FOOTPRINT, "framework")
def model_footprint(ctx: Context) -> ModelFootprint:
    """The served model's shape and weight bytes; None fields when no model directory is known."""
    if ctx.inputs.model_dir:
        path, origin = ctx.inputs.model_dir, "--model-dir"
        data = ctx.host.cached_fact(f"model_footprint:{path}", lambda: _local(path))
    else:
        found = _candidates(ctx)
        if not found:
            return ModelFootprint(None, "")
        path, origin = found[0]
        data = _node(ctx, path)
    if not isinstance(data, dict):
        return ModelFootprint(path, origin, error="not recorded in this snapshot")
    if data.get("error"):
        return ModelFootprint(path, origin, error=str(data["error"]))
    raw = data.get("shape")
    shape = None
    if isinstance(raw, dict):
        fields = ModelShape.__dataclass_fields__
        kwargs: dict[str, Any] = {k: v for k, v in raw.items() if k in fields}
        kwargs["problems"] = tuple(kwargs.get("problems") or ())
        shape = ModelShape(**kwargs)
    err = None if data.get("config_found") else f"{path}: no config.json"
    return ModelFootprint(
        path, origin, shape, data.get("weights_bytes"), str(data.get("weights_how") or ""), err
    )
