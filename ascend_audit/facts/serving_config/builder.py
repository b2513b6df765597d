"""Collects option values with their evidence, redacts secrets, and normalises them into
a ServingConfig; the flag tables every vLLM input shares."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from ascend_audit.facts.serving_config.model import (
    LEGACY_ADDITIONAL_KEYS,
    RELEVANT_ENV,
    ConfigItem,
    ServingConfig,
)
from ascend_audit.facts.serving_config.values import (
    as_bool,
    as_float,
    as_int,
    as_str,
    cudagraph_name,
    load_json_like,
    mode_name,
    scalar,
)
from ascend_audit.redact import redact_text

_SECRET_RE = re.compile(r"(api_?key|(?:^|_)token$|secret|passw(?:or)?d|credential)", re.IGNORECASE)
_REDACTED = "***"

SHORT_FLAGS = {
    "tp": "tensor_parallel_size",
    "pp": "pipeline_parallel_size",
    "dp": "data_parallel_size",
    "q": "quantization",
    "cc": "compilation_config",
    "O": "compilation_config",
    "ac": "additional_config",
}
JSON_FLAGS = frozenset(
    {
        "additional_config",
        "compilation_config",
        "speculative_config",
        "kv_transfer_config",
        "hf_overrides",
        "model_loader_extra_config",
    }
)


def _redact(key: str, value: Any) -> Any:
    return _REDACTED if _SECRET_RE.search(key) and value not in (None, True, False) else value


def env_of(env: Mapping[str, str] | None) -> dict[str, str]:
    if not env:
        return {}
    try:
        return {k: str(env[k]) for k in RELEVANT_ENV if k in env}
    except Exception:
        return {}


class Builder:
    """Collects option values with their evidence and then normalises them."""

    def __init__(self, source: str) -> None:
        self.source = source
        self.options: dict[str, Any] = {}
        self.items: list[ConfigItem] = []
        self.problems: list[str] = []
        self.additional: dict[str, Any] = {}
        self.compilation: dict[str, Any] = {}

    def set(
        self, key: str, value: Any, lineno: int | None, text: str, source: str | None = None
    ) -> None:
        value = _redact(key, value)
        if isinstance(value, str):
            value = redact_text(value)  # a URL password or token inside any option's value
        if _SECRET_RE.search(key):
            text = re.sub(r"(\S*(?:=|\s))\S+$", r"\1" + _REDACTED, text) if text else text
        text = redact_text(text) if isinstance(text, str) else text
        if key in JSON_FLAGS:
            value = self._json_value(key, value)
            if value is None:
                return
            if key == "additional_config" and isinstance(value, dict):
                self.additional.update(value)
                value = self.additional
            elif key == "compilation_config":
                if isinstance(value, int):  # `-O3`: a bare level
                    value = {"level": value}
                if isinstance(value, dict):
                    self.compilation.update(value)
                    value = self.compilation
        self.options[key] = value
        self.items.append(ConfigItem(key, value, source or self.source, lineno, text[:500]))

    def set_sub(self, key: str, sub: str, raw: Any, lineno: int | None, text: str) -> None:
        """`--compilation-config.cudagraph_mode=FULL`: one key of a JSON-valued option."""
        target = self.compilation if key == "compilation_config" else self.additional
        if key not in ("compilation_config", "additional_config"):
            self.options[f"{key}.{sub}"] = scalar(raw)
            return
        value = raw
        if isinstance(raw, str):
            loaded, problem = load_json_like(raw)
            value = loaded if problem is None else scalar(raw)
        node = target
        parts = sub.split(".")
        for p in parts[:-1]:
            nxt = node.get(p)
            if not isinstance(nxt, dict):
                nxt = {}
                node[p] = nxt
            node = nxt
        node[parts[-1]] = value
        self.options[key] = target
        self.items.append(ConfigItem(f"{key}.{sub}", value, self.source, lineno, text[:500]))

    def _json_value(self, key: str, value: Any) -> Any:
        if isinstance(value, str):
            if key == "compilation_config" and value.strip().isdigit():
                return int(value.strip())
            loaded, problem = load_json_like(value)
            if problem:
                self.problems.append(f"{key}: {problem}")
                return None
            value = loaded
        if value is None:
            return None
        if key in ("additional_config", "compilation_config") and not isinstance(
            value, (dict, int)
        ):
            self.problems.append(f"{key}: expected a JSON object, got {type(value).__name__}")
            return None
        return value

    def build(
        self, engine: str | None, env: Mapping[str, str] | None, **extra: Any
    ) -> ServingConfig:
        o = self.options
        comp = self.compilation
        add = self.additional
        model = as_str(o.get("model"))
        cudagraph = cudagraph_name(comp.get("cudagraph_mode"))
        mode = comp.get("mode", comp.get("level"))
        legacy = [k for k in LEGACY_ADDITIONAL_KEYS if k in add]
        prefix = o.get("enable_prefix_caching")
        cfg = ServingConfig(
            source=self.source,
            engine=engine,
            model=model,
            model_path=model if model and model.startswith(("/", ".", "~")) else None,
            served_model_name=as_str(o.get("served_model_name")),
            block_size=as_int(o.get("block_size")),
            gpu_memory_utilization=as_float(o.get("gpu_memory_utilization")),
            max_model_len=as_int(o.get("max_model_len")),
            enforce_eager=as_bool(o.get("enforce_eager")),
            cudagraph_mode=cudagraph,
            compilation_mode=mode_name(mode),
            full_cuda_graph=as_bool(comp.get("full_cuda_graph")),
            enable_prefix_caching=as_bool(prefix),
            cpu_offload_gb=as_float(o.get("cpu_offload_gb")),
            kv_cache_memory_bytes=as_int(o.get("kv_cache_memory_bytes", o.get("kv_cache_memory"))),
            load_format=as_str(o.get("load_format")),
            tensor_parallel_size=as_int(o.get("tensor_parallel_size")),
            pipeline_parallel_size=as_int(o.get("pipeline_parallel_size")),
            data_parallel_size=as_int(o.get("data_parallel_size")),
            data_parallel_size_local=as_int(o.get("data_parallel_size_local")),
            expert_parallel=as_bool(o.get("enable_expert_parallel")),
            max_num_seqs=as_int(o.get("max_num_seqs")),
            max_num_batched_tokens=as_int(o.get("max_num_batched_tokens")),
            dtype=as_str(o.get("dtype")),
            speculative_config=dict(o["speculative_config"])
            if isinstance(o.get("speculative_config"), dict)
            else {},
            quantization=as_str(o.get("quantization")),
            device=as_str(o.get("device")),
            config_file=as_str(o.get("config")),
            additional_config=dict(add),
            compilation_config=dict(comp),
            legacy_keys=tuple(legacy),
            options=dict(o),
            env=env_of(env),
            items=tuple(self.items),
            problems=tuple(p[:300] for p in self.problems[:100]),
        )
        return replace(cfg, **extra) if extra else cfg
