"""Weights and KV-cache lines: load time and size, blocks, memory, block-size overrides."""

from __future__ import annotations

import re

from ascend_audit.facts.serving_log.values import Rules, as_int, as_num, group

RULES = Rules()
_rule = RULES.add

# KV cache / memory
_rule(
    "blocks:",
    r"# (npu|NPU|gpu|GPU|cuda|CUDA) blocks: (\d+), # CPU blocks: (\d+)",
    "npu_blocks",
    "kv",
    group(2, as_int),
)
_rule(
    "KV cache size:", r"KV cache size: ([\d,]+) tokens", "kv_cache_tokens", "kv", group(1, as_int)
)
_rule(
    "Maximum concurrency for",
    r"Maximum concurrency for ([\d,]+) tokens per request: ([\d.]+)\s*x",
    "max_concurrency",
    "kv",
    group(2, as_num),
)
_rule(
    "Available KV cache memory",
    r"Available KV cache memory: (-?[\d.]+) GiB",
    "available_kv_gib",
    "kv",
    group(1, as_num),
)
_rule(
    "Available memory:",
    r"Available memory: (-?\d+), total memory: (\d+)",
    "available_memory_bytes",
    "kv",
    group(1, as_int),
)
_rule(
    "No available memory for the cache blocks",
    r"No available memory for the cache blocks",
    "no_kv_memory",
    "kv",
)
_rule(
    "Error in memory profiling",
    r"Error in memory profiling\. Initial free memory",
    "memory_profiling_error",
    "kv",
)
_rule("NPU out of memory", r"NPU out of memory\. Tried to allocate", "npu_oom", "kv")
_rule(
    "lock size",
    r"Block size is set to 128 if prefix cache or chunked prefill is enabled"
    r"|block size must be set to 128",
    "block_size_forced_128",
    "kv",
    lambda m: 128,
)
_rule(
    "None of the kernel sizes",
    r"None of the kernel sizes \[(.*?)\] can divide physical block size (\d+) evenly",
    "kernel_block_size_mismatch",
    "kv",
    group(2, as_int),
)
_rule(
    "Post graph compilation",
    r"available memory on each NPU is reduced to merely ([\d.]+) GB",
    "post_graph_memory_gb",
    "kv",
    group(1, as_num),
)
_rule("PYTORCH_NPU_ALLOC_CONF", r"Set PYTORCH_NPU_ALLOC_CONF=(\S*)", "alloc_conf", "kv", group())
_rule(
    "PYTORCH_NPU_ALLOC_CONF",
    r"Removed expandable_segments from PYTORCH_NPU_ALLOC_CONF",
    "alloc_conf_removed_expandable",
    "kv",
)
_rule(
    "num_gpu_blocks_override=",
    r"Overriding num_gpu_blocks=(\d+) with num_gpu_blocks_override=(\d+)",
    "num_gpu_blocks_override",
    "kv",
    group(2, as_int),
)
_rule(
    "init engine",
    r"init engine \(profile, create kv cache, warmup model\) took ([\d.]+) seconds",
    "init_engine_seconds",
    "kv",
    group(1, as_num),
)
# Weights
_rule(
    "Loading weights took",
    r"Loading weights took ([\d.]+) seconds",
    "weights_load_seconds",
    "weights",
    group(1, as_num),
)
_rule(
    "Loading model weights took",
    r"Loading model weights took ([\d.]+) GB",
    "weights_gb",
    "weights",
    group(1, as_num),
)
_rule(
    "Model loading took",
    r"Model loading took ([\d.]+) GiB memory and ([\d.]+) seconds",
    "model_loading",
    "weights",
    group(1, as_num),
)
_rule(
    "checkpoint shards",
    r"Loading (safetensors|pt) checkpoint shards",
    "checkpoint_format",
    "weights",
    group(),
)
_rule(
    "Starting to load model",
    r"Starting to load model (.*?)\.\.\.",
    "model_path",
    "weights",
    group(),
)
_rule(
    "Time spent downloading weights",
    r"Time spent downloading weights for (\S+): ([\d.]+) seconds",
    "weights_download_seconds",
    "weights",
    group(2, as_num),
)
_rule(
    "lock_size",
    r"[Bb]lock[ _]size\b[^.\n]{0,80}?\b(?:forced|set|changed|reset|overridden|adjusted)"
    r"\s+to\s+(\d+)",
    "block_size_forced",
    "kv",
    group(1, as_int),
)
_rule(
    "lock size",
    r"[Bb]lock[ _]size\b[^.\n]{0,80}?\b(?:forced|changed|reset|overridden|adjusted)\s+to\s+(\d+)",
    "block_size_forced",
    "kv",
    group(1, as_int),
)
# Weights: tqdm progress of checkpoint shards (elapsed time) and sizes
_rule(
    "checkpoint shards:",
    r"checkpoint shards:\s*(\d+)%[^\[]*\[(?:(\d+):)?(\d+):(\d+)<",
    "weights_progress",
    "weights",
    lambda m: float(int(m.group(2) or 0) * 3600 + int(m.group(3)) * 60 + int(m.group(4))),
)
_rule(
    "Checkpoint size:",
    r"Checkpoint size: ([\d.]+) GiB",
    "checkpoint_gib",
    "weights",
    group(1, as_num),
)

_KV_KEYS = (
    "model",
    "max_model_len",
    "max_seq_len",
    "block_size",
    "gpu_memory_utilization",
    "enforce_eager",
    "load_format",
    "cpu_offload_gb",
    "tensor_parallel_size",
    "quantization",
)
KV_RE = re.compile(
    r"(?:^|[\s,({])['\"]?(" + "|".join(_KV_KEYS) + r")['\"]?\s*[=:]\s*"
    r"('[^']{0,4096}'|\"[^\"]{0,4096}\"|[^,\s)}]{1,256})"
)
USAGE_RE = re.compile(r"GPU KV cache usage: ([\d.]+)%")
