"""What a serving deployment asked for: the ServingConfig fact and its evidence items."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

__all__ = ["LEGACY_ADDITIONAL_KEYS", "RELEVANT_ENV", "ConfigItem", "ServingConfig"]

LEGACY_ADDITIONAL_KEYS = ("torchair_graph_config", "ascend_scheduler_config", "enable_graph_mode")
RELEVANT_ENV = (
    "ASCEND_LAUNCH_BLOCKING",
    "TASK_QUEUE_ENABLE",
    "PYTORCH_NPU_ALLOC_CONF",
    "HCCL_OP_EXPANSION_MODE",
    "VLLM_USE_V1",
    "VLLM_ASCEND_ENABLE_NZ",
    "VLLM_VERSION",
    "VLLM_PLUGINS",
    "VLLM_ATTENTION_BACKEND",
    "ASCEND_RT_VISIBLE_DEVICES",
    "NPU_MEMORY_FRACTION",
    "TORCH_DEVICE_BACKEND_AUTOLOAD",
    "ASCEND_HOME_PATH",
    "ASCEND_TOOLKIT_HOME",
    "ASCEND_OPP_PATH",
    "MIES_CONFIG_JSON_PATH",
)


@dataclass(frozen=True)
class ConfigItem:
    """One configuration value and where it was read: file or argv, line or index, the text."""

    key: str
    value: Any
    source: str
    lineno: int | None
    text: str

    def to_dict(self) -> dict[str, Any]:
        """JSON-serialisable form."""
        return {
            "key": self.key,
            "value": self.value,
            "source": self.source,
            "lineno": self.lineno,
            "text": self.text,
        }


@dataclass(frozen=True)
class ServingConfig:
    """What a serving deployment asked for, normalised across vLLM and MindIE."""

    source: str
    engine: str | None = None  # "vllm" | "mindie"
    model: str | None = None
    model_path: str | None = None
    served_model_name: str | None = None
    block_size: int | None = None
    gpu_memory_utilization: float | None = None
    max_model_len: int | None = None
    enforce_eager: bool | None = None
    cudagraph_mode: str | None = None
    compilation_mode: str | None = None
    full_cuda_graph: bool | None = None
    enable_prefix_caching: bool | None = None
    cpu_offload_gb: float | None = None
    kv_cache_memory_bytes: int | None = None
    load_format: str | None = None
    tensor_parallel_size: int | None = None
    pipeline_parallel_size: int | None = None
    data_parallel_size: int | None = None
    data_parallel_size_local: int | None = None
    expert_parallel: bool | None = None
    max_num_seqs: int | None = None
    max_num_batched_tokens: int | None = None
    dtype: str | None = None
    speculative_config: dict[str, Any] = field(default_factory=dict, hash=False)
    quantization: str | None = None
    device: str | None = None
    config_file: str | None = None
    additional_config: dict[str, Any] = field(default_factory=dict, hash=False)
    compilation_config: dict[str, Any] = field(default_factory=dict, hash=False)
    legacy_keys: tuple[str, ...] = ()
    options: dict[str, Any] = field(default_factory=dict, hash=False)
    env: dict[str, str] = field(default_factory=dict, hash=False)
    # MindIE
    npu_device_ids: tuple[tuple[int, ...], ...] = ()
    world_size: int | None = None
    npu_mem_size: int | None = None
    cpu_mem_size: int | None = None
    max_input_token_len: int | None = None
    max_prefill_tokens: int | None = None
    max_batch_size: int | None = None
    max_prefill_batch_size: int | None = None
    backend_type: str | None = None
    model_instances: int | None = None
    items: tuple[ConfigItem, ...] = ()
    problems: tuple[str, ...] = ()

    def item(self, key: str) -> ConfigItem | None:
        """The item that set a key last (the evidence for it), or None."""
        found = None
        for it in self.items:
            if it.key == key or it.key.endswith("." + key):
                found = it
        return found

    def to_dict(self) -> dict[str, Any]:
        """JSON-serialisable form."""
        out: dict[str, Any] = {}
        for name in self.__dataclass_fields__:
            value = getattr(self, name)
            if name == "items":
                out[name] = [i.to_dict() for i in value]
            elif name == "npu_device_ids":
                out[name] = [list(g) for g in value]
            elif isinstance(value, tuple):
                out[name] = list(value)
            else:
                out[name] = value
        return out
