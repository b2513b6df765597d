"""A model's size and attention shape: HF config.json, the safetensors index, shard sizes.

Also the arithmetic of memory fit: weights per card and KV cache bytes per token per card for a
tensor × pipeline parallel split (GQA/MHA: 2 × layers × kv heads × head_dim; MLA: layers ×
(kv_lora_rank + qk_rope_head_dim), not split by TP).
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from ascend_audit.facts.keys import FactKey

__all__ = [
    "DTYPE_BYTES",
    "MODEL_FOOTPRINT",
    "ModelFootprint",
    "ModelShape",
    "dtype_bytes",
    "index_total_size",
    "parse_model_config",
]

MAX_TEXT = 64 * 1024 * 1024
DTYPE_BYTES = {
    "float32": 4,
    "fp32": 4,
    "float": 4,
    "bfloat16": 2,
    "bf16": 2,
    "float16": 2,
    "fp16": 2,
    "half": 2,
    "fp8": 1,
    "fp8_e4m3": 1,
    "fp8_e5m2": 1,
    "int8": 1,
}
_NESTED = ("text_config", "llm_config", "language_config")


@dataclass(frozen=True)
class ModelShape:
    """What the model's config.json says about its layers, heads and dtype."""

    layers: int | None = None
    heads: int | None = None
    kv_heads: int | None = None
    head_dim: int | None = None
    hidden: int | None = None
    dtype: str | None = None
    max_positions: int | None = None
    kv_lora_rank: int | None = None  # MLA (DeepSeek V2/V3)
    qk_rope_head_dim: int | None = None
    architecture: str | None = None
    problems: tuple[str, ...] = ()

    @property
    def mla(self) -> bool:
        return bool(self.kv_lora_rank)

    @property
    def complete(self) -> bool:
        """Enough is known to size the KV cache."""
        if self.layers is None:
            return False
        if self.mla:
            return True
        return bool(self.kv_heads and self.head_dim)

    def kv_bytes_per_token(self, tp: int, pp: int, kv_bytes: int) -> int | None:
        """KV cache bytes one token takes on one card of a tp × pp split (None when unknown)."""
        if not self.complete or self.layers is None:
            return None
        layers = -(-self.layers // max(pp, 1))
        if self.mla:
            width = (self.kv_lora_rank or 0) + (self.qk_rope_head_dim or 0)
            return layers * width * kv_bytes
        kv = max(1, (self.kv_heads or 0) // max(tp, 1))
        return 2 * layers * kv * (self.head_dim or 0) * kv_bytes

    def describe(self) -> str:
        if self.mla:
            attn = f"MLA kv_lora_rank {self.kv_lora_rank} + rope {self.qk_rope_head_dim}"
        else:
            attn = f"{self.heads} heads, {self.kv_heads} KV heads x head_dim {self.head_dim}"
        return f"{self.layers} layers, {attn}, hidden {self.hidden}, dtype {self.dtype}"


def _int(v: object) -> int | None:
    return v if isinstance(v, int) and not isinstance(v, bool) and v >= 0 else None


def dtype_bytes(name: object) -> int | None:
    """Bytes per element of a torch dtype name (`bfloat16`, `torch.float16`, `fp8`)."""
    if not isinstance(name, str):
        return None
    key = name.strip().lower().replace("torch.", "")
    if key.startswith("fp8") or key.startswith("float8"):
        return 1
    return DTYPE_BYTES.get(key)


def parse_model_config(text: str) -> ModelShape:
    """The attention shape from a Hugging Face config.json; never raises."""
    if not isinstance(text, str) or not text.strip():
        return ModelShape(problems=("config.json is empty",))
    if len(text) > MAX_TEXT:
        return ModelShape(problems=("config.json is too large",))
    try:
        data = json.loads(text)
    except (ValueError, RecursionError) as exc:
        return ModelShape(problems=(f"config.json is not JSON: {exc}"[:200],))
    if not isinstance(data, dict):
        return ModelShape(problems=("config.json is not a JSON object",))
    top = data
    for key in _NESTED:
        inner = data.get(key)
        if isinstance(inner, dict) and _int(inner.get("num_hidden_layers")):
            data = {**top, **inner}
            break

    def first(*names: str) -> int | None:
        for n in names:
            v = _int(data.get(n))
            if v is not None:
                return v
        return None

    layers = first("num_hidden_layers", "n_layer", "num_layers", "n_layers")
    heads = first("num_attention_heads", "n_head", "num_heads")
    kv_heads = first("num_key_value_heads", "num_kv_heads", "multi_query_group_num") or heads
    hidden = first("hidden_size", "n_embd", "d_model")
    head_dim = first("head_dim") or (hidden // heads if hidden and heads else None)
    dtype = data.get("torch_dtype") or data.get("dtype") or top.get("torch_dtype")
    arch = top.get("architectures")
    problems = []
    if layers is None:
        problems.append("config.json names no num_hidden_layers")
    if not kv_heads and not first("kv_lora_rank"):
        problems.append("config.json names no attention heads")
    return ModelShape(
        layers=layers,
        heads=heads,
        kv_heads=kv_heads,
        head_dim=head_dim,
        hidden=hidden,
        dtype=dtype if isinstance(dtype, str) else None,
        max_positions=first("max_position_embeddings", "n_positions", "seq_length"),
        kv_lora_rank=first("kv_lora_rank"),
        qk_rope_head_dim=first("qk_rope_head_dim"),
        architecture=arch[0]
        if isinstance(arch, list) and arch and isinstance(arch[0], str)
        else None,
        problems=tuple(problems),
    )


def index_total_size(text: str) -> int | None:
    """metadata.total_size of a model.safetensors.index.json (bytes of every tensor)."""
    try:
        data = json.loads(text)
    except (ValueError, RecursionError, TypeError):
        return None
    meta = data.get("metadata") if isinstance(data, dict) else None
    total = meta.get("total_size") if isinstance(meta, dict) else None
    if isinstance(total, str) and total.isdigit():
        total = int(total)
    return total if isinstance(total, int) and not isinstance(total, bool) and total > 0 else None


@dataclass(frozen=True)
class ModelFootprint:
    """Where the model is, its shape, and how many bytes its weights take (and how we know)."""

    path: str | None
    origin: str
    shape: ModelShape | None = None
    weights_bytes: int | None = None
    weights_how: str = ""  # "index metadata.total_size" | "sum of 4 *.safetensors shards"
    error: str | None = None


MODEL_FOOTPRINT: FactKey[ModelFootprint] = FactKey("model_footprint")
