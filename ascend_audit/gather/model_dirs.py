"""Model directories gatherer: what the weights directories named by the serving inputs hold.

Checks judge weight formats and load-time estimates from this fact; they never list or stat
the node themselves.
"""

from __future__ import annotations

import posixpath

from ascend_audit.context import Context, gatherer
from ascend_audit.facts.framework_inputs import (
    MODEL_DIRS,
    SERVING_CONFIGS,
    SERVING_LOGS,
    ModelDir,
    ModelDirs,
)
from ascend_audit.facts.storage import WEIGHTS_STORAGE

MAX_SIZED_ENTRIES = 2000  # entries stat'ed to size a directory on network storage


def _size_gb(ctx: Context, path: str, names: list[str]) -> float | None:
    sizes = [
        getattr(ctx.host.stat(posixpath.join(path, n)), "size", 0) or 0
        for n in names[:MAX_SIZED_ENTRIES]
    ]
    return sum(sizes) / 1e9 or None


def _weights_on_network(ctx: Context) -> str | None:
    """The weights path when the driver layer found it on network storage (else None)."""
    try:
        ws = ctx.fact(WEIGHTS_STORAGE)
    except Exception:  # a framework-only run or a snapshot without driver answers
        return None
    loc = ws.location
    return ws.weights.path if loc is not None and loc.is_network else None


@gatherer(MODEL_DIRS, "framework")
def model_dirs(ctx: Context) -> ModelDirs:
    """List each model path of the serving configs and logs; size the weights on network storage."""
    logs = [i.facts for i in ctx.fact(SERVING_LOGS) if i.facts is not None and not i.error]
    paths = [c.model_path for c in ctx.fact(SERVING_CONFIGS).configs if c.model_path]
    paths += [f.model_path for f in logs if f.model_path]
    networked = _weights_on_network(ctx)
    out: list[ModelDir] = []
    for path in dict.fromkeys([*paths, *([networked] if networked else [])]):
        names = ctx.host.listdir(path)
        size = _size_gb(ctx, path, names) if path == networked and names else None
        out.append(ModelDir(path, tuple(names) if names is not None else None, size))
    return ModelDirs(tuple(out))
