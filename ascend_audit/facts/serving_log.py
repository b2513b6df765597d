"""Streaming scanner for vLLM / vllm-ascend / MindIE serving logs: what took effect at startup."""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any, Union

from ascend_audit.safe_io import open_regular

__all__ = [
    "MAX_LINE_CHARS",
    "STAGES",
    "LogHit",
    "ServingLogFacts",
    "read_text_lines",
    "scan_serving_log",
    "scan_serving_log_file",
]

MAX_LINE_CHARS = 64 * 1024
_EXCERPT = 400  # evidence text kept per hit; a window around the match on long lines
_HITS_PER_SIGNAL = 16  # first N-1 kept, the last slot always holds the newest hit
_MAX_PROBLEMS = 100

Scalar = Union[str, int, float, bool, None]


@dataclass(frozen=True)
class LogHit:
    """One matched signature: its name, the value it carries, and the line that proves it."""

    signal: str
    value: Scalar
    source: str
    lineno: int
    text: str

    def to_dict(self) -> dict[str, Any]:
        """JSON-serialisable form."""
        return {
            "signal": self.signal,
            "value": self.value,
            "source": self.source,
            "lineno": self.lineno,
            "text": self.text,
        }


_CATEGORIES = (
    "engine_inits",
    "eager",
    "graph",
    "graph_fallbacks",
    "graph_failures",
    "graph_notes",
    "env_conflicts",
    "kv",
    "weights",
    "config",
    "stack_errors",
    "mindie",
    "lifecycle",
    "deaths",
    "error_codes",
    "versions",
)

# How far a service got, in order; "died" is not a stage but the end of one.
STAGES = (
    "launched",
    "configured",
    "weights_loaded",
    "kv_sized",
    "graphs_captured",
    "server_up",
    "serving",
)


@dataclass(frozen=True)
class ServingLogFacts:
    """What a serving log proves about engine, graph mode, KV cache, weights and the stack."""

    source: str
    lines_read: int = 0
    long_lines: int = 0
    engine: str | None = None  # "V0" | "V1" | "mindie"
    vllm_version: str | None = None
    graph_mode: str = "unknown"  # "graph" | "eager" | "mixed" | "unknown"
    enforce_eager: bool | None = None
    cudagraph_mode: str | None = None  # in effect: the engine config line
    requested_cudagraph_mode: str | None = None  # asked for: args / non-default args line
    compilation_level: int | None = None
    graph_capture_seconds: float | None = None
    graph_capture_gib: float | None = None
    npu_blocks: int | None = None
    cpu_blocks: int | None = None
    num_gpu_blocks_override: int | None = None
    kv_cache_tokens: int | None = None
    max_concurrency: float | None = None
    max_concurrency_tokens: int | None = None
    available_kv_gib: float | None = None
    kv_usage_max_pct: float | None = None
    block_size: int | None = None
    max_model_len: int | None = None
    gpu_memory_utilization: float | None = None
    alloc_conf: str | None = None
    weights_load_seconds: float | None = None
    weights_gb: float | None = None
    checkpoint_format: str | None = None  # "safetensors" | "pt"
    load_format: str | None = None
    model: str | None = None
    model_path: str | None = None
    cpu_offload_gb: float | None = None
    tensor_parallel_size: int | None = None
    quantization: str | None = None
    engine_inits: tuple[LogHit, ...] = ()
    eager: tuple[LogHit, ...] = ()
    graph: tuple[LogHit, ...] = ()
    graph_fallbacks: tuple[LogHit, ...] = ()
    graph_failures: tuple[LogHit, ...] = ()
    graph_notes: tuple[LogHit, ...] = ()
    env_conflicts: tuple[LogHit, ...] = ()
    kv: tuple[LogHit, ...] = ()
    weights: tuple[LogHit, ...] = ()
    config: tuple[LogHit, ...] = ()
    stack_errors: tuple[LogHit, ...] = ()
    mindie: tuple[LogHit, ...] = ()
    lifecycle: tuple[LogHit, ...] = ()  # the first line of each stage reached (value: stage)
    deaths: tuple[LogHit, ...] = ()  # fatal markers and final exceptions, in line order
    error_codes: tuple[LogHit, ...] = ()  # one hit per distinct code (value: "kind:code")
    versions: tuple[LogHit, ...] = ()  # stack versions the log states (value: version)
    engine_kind: str | None = None  # "vllm" | "mindie" | "sglang" | "lmdeploy" | "tgi"
    stage: str | None = None  # the last stage reached, one of STAGES
    died: bool = False  # the log ends in death (no later restart or serving)
    death: LogHit | None = None  # the line that proves the death (final exception first)
    final_exception: str | None = None  # "KeyError: 'model.embed_tokens.weight'"
    exception_where: str | None = None  # file:line the exception was raised at
    failed_operators: tuple[str, ...] = ()  # operators named in device error blocks
    serving_lines: int = 0  # successful requests / throughput lines
    models_404: int = 0  # GET /v1/models answered 404
    shut_down: bool = False  # a graceful shutdown was logged
    collect_env: bool = False  # a pasted collect_env.py output
    launch_args: tuple[int, str] | None = None  # (line, text) of the last `non-default args:`
    binary_share: float = 0.0  # share of binary characters in the first MiB (file scans)
    fallback: Any = field(default=None, compare=False)  # FallbackSummary of the same pass
    signal_counts: tuple[tuple[str, int], ...] = ()
    problems: tuple[str, ...] = field(default=())

    def all_hits(self) -> tuple[LogHit, ...]:
        """Every kept hit, in line order."""
        out = [h for cat in _CATEGORIES for h in getattr(self, cat)]
        return tuple(sorted(out, key=lambda h: h.lineno))

    def hits(self, signal: str) -> tuple[LogHit, ...]:
        """Kept hits of one signal, in line order."""
        return tuple(h for h in self.all_hits() if h.signal == signal)

    def last(self, signal: str) -> LogHit | None:
        """The newest hit of one signal, or None."""
        found = self.hits(signal)
        return found[-1] if found else None

    @property
    def recognised(self) -> bool:
        """The text is a serving log or a collect_env output: some signature matched."""
        return bool(self.signal_counts or self.engine_kind or self.collect_env)

    def version(self, name: str) -> str | None:
        """A stack version the log states (torch, torch_npu, cann, vllm, vllm_ascend, driver …)."""
        hit = next((h for h in reversed(self.versions) if h.signal == f"version_{name}"), None)
        return str(hit.value) if hit is not None else None

    def count(self, signal: str) -> int:
        """How many lines matched a signal (including hits not kept)."""
        return dict(self.signal_counts).get(signal, 0)

    def to_dict(self) -> dict[str, Any]:
        """JSON-serialisable form."""
        out: dict[str, Any] = {}
        for name in self.__dataclass_fields__:
            value = getattr(self, name)
            if name in _CATEGORIES:
                out[name] = [h.to_dict() for h in value]
            elif isinstance(value, LogHit):
                out[name] = value.to_dict()
            elif name == "fallback":
                out[name] = value.to_dict() if value is not None else None
            elif name == "signal_counts":
                out[name] = dict(value)
            elif isinstance(value, tuple):
                out[name] = list(value)
            else:
                out[name] = value
        return out


def read_text_lines(path: str) -> Iterable[tuple[int, str]]:
    """Yield (lineno, text) from a file, decoded leniently, each line capped at MAX_LINE_CHARS."""
    with open_regular(path) as fh:
        lineno = 0
        while True:
            raw = fh.readline(MAX_LINE_CHARS * 4 + 1)
            if not raw:
                return
            lineno += 1
            text = raw[: MAX_LINE_CHARS * 4].decode("utf-8", errors="replace")
            if not raw.endswith(b"\n"):
                # Skip the rest of an over-long physical line so memory stays bounded.
                while raw and not raw.endswith(b"\n"):
                    raw = fh.readline(MAX_LINE_CHARS * 4 + 1)
            yield lineno, text[:MAX_LINE_CHARS]


# --- value converters -------------------------------------------------------------------------


def _num(s: str) -> float | None:
    try:
        return float(s.replace(",", ""))
    except ValueError:
        return None


def _int(s: str) -> int | None:
    v = _num(s)
    return int(v) if v is not None and v.is_integer() and abs(v) < 1e18 else None


_CUDAGRAPH_INT = {"0": "NONE", "1": "PIECEWISE", "2": "FULL"}
_CUDAGRAPH_PAIR = {("2", "0"): "FULL_DECODE_ONLY", ("2", "1"): "FULL_AND_PIECEWISE"}


def _cudagraph_name(raw: str) -> str:
    raw = raw.strip().strip("'\"").strip()
    if raw.startswith("<"):  # enum repr: <CUDAGraphMode.PIECEWISE: 1>
        raw = raw[1:].split(":", 1)[0]
    if raw in _CUDAGRAPH_INT:
        return _CUDAGRAPH_INT[raw]
    if raw.startswith("["):
        parts = tuple(p.strip() for p in raw.strip("[]").split(","))
        return _CUDAGRAPH_PAIR.get(parts, raw)  # type: ignore[arg-type]
    return raw.rsplit(".", 1)[-1].upper()


# --- signatures -------------------------------------------------------------------------------
# Each rule: (trigger substring, regex or None, signal, category, value from match).
# The trigger is a cheap `in` test that guards the regex, so most lines cost a few substring scans.

_Value = Callable[[re.Match[str]], Scalar]


def _g(i: int = 1, conv: Callable[[str], Scalar] = str) -> _Value:
    return lambda m: conv(m.group(i))


def _true(_: re.Match[str]) -> Scalar:
    return True


_RULES: list[tuple[str, re.Pattern[str], str, str, _Value]] = []


def _rule(trigger: str, pattern: str, signal: str, category: str, value: _Value = _true) -> None:
    _RULES.append((trigger, re.compile(pattern), signal, category, value))


# Graph mode: eager proof
_rule(
    "Compilation disabled",
    r"Compilation disabled, using eager mode by default",
    "compilation_disabled",
    "eager",
)
_rule(
    "Enforce eager set",
    r"Enforce eager set, disabling torch\.compile and CUDAGraphs",
    "enforce_eager_set",
    "eager",
)
_rule(
    "Cudagraph is disabled under eager",
    r"Cudagraph is disabled under eager mode",
    "cudagraph_disabled_eager",
    "eager",
)
_rule(
    "NO_COMPILATION is set",
    r"CompilationLevel\.NO_COMPILATION is set, Setting CUDAGraphMode to NONE",
    "no_compilation",
    "eager",
)
_rule(
    "not support graph capture",
    r"npu not support graph capture\.?\s*(?:current compilation level\s*:\s*(\S+))?",
    "npu_no_graph_capture",
    "eager",
    _g(0),
)
# Graph mode: capture proof
_rule(
    "Capturing",
    r"Capturing (CUDA|ACL) graphs \(([^,)]+), (\w+)\)",
    "graph_capturing",
    "graph",
    lambda m: f"{m.group(1)} {m.group(2)} {m.group(3)}",
)
_rule(
    "Starting to capture ACL graphs",
    r"Starting to capture ACL graphs for cases: \[.*?\], mode: (\w+)",
    "graph_capture_started",
    "graph",
    _g(),
)
_rule(
    "Graph capturing finished",
    r"Graph capturing finished in ([\d.]+) secs?, took (-?[\d.]+) GiB",
    "graph_capture_finished",
    "graph",
    _g(1, _num),
)
_rule("Replaying aclgraph", r"Replaying aclgraph", "aclgraph_replaying", "graph")
_rule("Capturing torchair graph", r"Capturing torchair graph", "torchair_capturing", "graph")
_rule(
    "is compiled successfully",
    r"Batchsize (\d+) is compiled successfully: (\d+)/(\d+)",
    "torchair_compiled",
    "graph",
    _g(1, _int),
)
# Graph mode: fallbacks / downgrades
_rule(
    "not support on NPU",
    r"(\w+) cudagraph_mode is not support on NPU\. falling back to (\w+)",
    "cudagraph_unsupported_fallback",
    "graph_fallbacks",
    _g(2),
)
_rule(
    "fallback to",
    r"don't support (\S+), fallback to (\w+)",
    "encoder_decoder_fallback",
    "graph_fallbacks",
    _g(2),
)
_rule(
    "etting cudagraph_mode=",
    r"[Ss]etting cudagraph_mode=(\w+)",
    "cudagraph_mode_reset",
    "graph_fallbacks",
    _g(),
)
_rule(
    "under xlite", r"Falling back to (\w+) under xlite", "xlite_fallback", "graph_fallbacks", _g()
)
_rule(
    "ACLGraph has been disabled",
    r"ACLGraph has been disabled",
    "aclgraph_disabled",
    "graph_fallbacks",
    lambda m: "NONE",
)
_rule(
    "alling back to",
    r"[Ff]alling back to (NONE|PIECEWISE|FULL(?:_DECODE_ONLY|_AND_PIECEWISE)?)\b",
    "graph_fallback",
    "graph_fallbacks",
    _g(),
)
# Graph mode: failures
_rule("207008", r"error code is 207008", "stream_resources_207008", "graph_failures")
_rule(
    "Stream resources are insufficient",
    r"Stream resources are insufficient",
    "stream_resources_insufficient",
    "graph_failures",
)
_rule(
    "Insufficient_Stream_Resources",
    r"Insufficient_Stream_Resources",
    "stream_resources_insufficient",
    "graph_failures",
)
_rule("Alloc sq cq fail", r"Alloc sq cq fail", "alloc_sq_cq_fail", "graph_failures")
_rule("207005", r"error code is 207005", "alloc_sq_cq_207005", "graph_failures")
_rule(
    "sizes capture fail", r"ACLgraph sizes capture fail", "aclgraph_capture_fail", "graph_failures"
)
_rule(
    "ACL Graph does not support",
    r"ACL Graph does not support (\w+)",
    "aclgraph_unsupported_model",
    "graph_failures",
    _g(),
)
_rule(
    "graph mode and eager mode at the same time",
    r"Can't enable graph mode and eager mode at the same time",
    "graph_eager_conflict",
    "graph_failures",
)
# Graph mode: notes
_rule(
    "Torchair compilation enabled",
    r"Torchair compilation enabled on NPU",
    "torchair_enabled",
    "graph_notes",
)
_rule(
    "Adjusted ACL graph batch sizes",
    r"Adjusted ACL graph batch sizes for (\S+) model \(layers: (\d+)\): (\d+) \S+ (\d+) sizes",
    "capture_sizes_adjusted",
    "graph_notes",
    _g(4, _int),
)
_rule(
    "Calculated maximum supported batch sizes",
    r"Calculated maximum supported batch sizes for ACL graph: (\d+)",
    "max_graph_batch_sizes",
    "graph_notes",
    _g(1, _int),
)
_rule(
    "compilation enabled on NPU",
    r"\b(PIECEWISE|FULL(?:_DECODE_ONLY|_AND_PIECEWISE)?) compilation enabled on NPU",
    "npu_compilation_mode",
    "graph_notes",
    _g(),
)
_rule(
    "AscendCompiler hash factors",
    r"'enable_npugraph_ex': (True|False)",
    "npugraph_ex",
    "graph_notes",
    lambda m: m.group(1) == "True",
)
_rule(
    "NPU graph mode is currently experimental",
    r"NPU graph mode is currently experimental and disabled by default",
    "graph_mode_disabled_default",
    "graph_notes",
)
# Environment conflicts
_rule(
    "ASCEND_LAUNCH_BLOCKING",
    r"incompatible with ASCEND_LAUNCH_BLOCKING=1"
    r"|ASCEND_LAUNCH_BLOCKING=1.*(?:incompatible|not supported|Error)",
    "launch_blocking_conflict",
    "env_conflicts",
)
_rule(
    "TASK_QUEUE_ENABLE",
    r"Do not support TASK_QUEUE_ENABLE = 2 during NPU graph capture",
    "task_queue_conflict",
    "env_conflicts",
)
# KV cache / memory
_rule(
    "blocks:",
    r"# (npu|NPU|gpu|GPU|cuda|CUDA) blocks: (\d+), # CPU blocks: (\d+)",
    "npu_blocks",
    "kv",
    _g(2, _int),
)
_rule("KV cache size:", r"KV cache size: ([\d,]+) tokens", "kv_cache_tokens", "kv", _g(1, _int))
_rule(
    "Maximum concurrency for",
    r"Maximum concurrency for ([\d,]+) tokens per request: ([\d.]+)\s*x",
    "max_concurrency",
    "kv",
    _g(2, _num),
)
_rule(
    "Available KV cache memory",
    r"Available KV cache memory: (-?[\d.]+) GiB",
    "available_kv_gib",
    "kv",
    _g(1, _num),
)
_rule(
    "Available memory:",
    r"Available memory: (-?\d+), total memory: (\d+)",
    "available_memory_bytes",
    "kv",
    _g(1, _int),
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
    _g(2, _int),
)
_rule(
    "Post graph compilation",
    r"available memory on each NPU is reduced to merely ([\d.]+) GB",
    "post_graph_memory_gb",
    "kv",
    _g(1, _num),
)
_rule("PYTORCH_NPU_ALLOC_CONF", r"Set PYTORCH_NPU_ALLOC_CONF=(\S*)", "alloc_conf", "kv", _g())
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
    _g(2, _int),
)
_rule(
    "init engine",
    r"init engine \(profile, create kv cache, warmup model\) took ([\d.]+) seconds",
    "init_engine_seconds",
    "kv",
    _g(1, _num),
)
# Weights
_rule(
    "Loading weights took",
    r"Loading weights took ([\d.]+) seconds",
    "weights_load_seconds",
    "weights",
    _g(1, _num),
)
_rule(
    "Loading model weights took",
    r"Loading model weights took ([\d.]+) GB",
    "weights_gb",
    "weights",
    _g(1, _num),
)
_rule(
    "Model loading took",
    r"Model loading took ([\d.]+) GiB memory and ([\d.]+) seconds",
    "model_loading",
    "weights",
    _g(1, _num),
)
_rule(
    "checkpoint shards",
    r"Loading (safetensors|pt) checkpoint shards",
    "checkpoint_format",
    "weights",
    _g(),
)
_rule(
    "Starting to load model", r"Starting to load model (.*?)\.\.\.", "model_path", "weights", _g()
)
_rule(
    "Time spent downloading weights",
    r"Time spent downloading weights for (\S+): ([\d.]+) seconds",
    "weights_download_seconds",
    "weights",
    _g(2, _num),
)
# Stack / versions
_rule(
    "Failed to load the backend extension",
    r"Failed to load the backend extension: (\w+)",
    "backend_extension_failed",
    "stack_errors",
    _g(),
)
_rule(
    "cannot open shared object file",
    r"(lib(?:hccl|ascendcl|ascend_hal|atb|tbe_adapter|torch_npu|opapi|runtime)\S*?\.so)\S*"
    r": cannot open shared object file",
    "cann_lib_missing",
    "stack_errors",
    _g(),
)
_rule("undefined symbol", r"undefined symbol: (\S+)", "undefined_symbol", "stack_errors", _g())
_rule(
    "Two accelerators",
    r"Two accelerators cannot be used at the same time in PyTorch: npu and (\w+)",
    "two_accelerators",
    "stack_errors",
    _g(),
)
_rule(
    "does not match the installed version's device type",
    r"Current device type: (.*?) does not match the installed version's device type: ([\w.-]+)",
    "device_type_mismatch",
    "stack_errors",
    _g(2),
)
_rule(
    "of bin package does not match",
    r"the socversion (\S+) of bin package does not match the current device socverison (\S+)",
    "soc_version_mismatch",
    "stack_errors",
    _g(1),
)
_rule(
    "AclrtGetDeviceInfo failed",
    r"AclrtGetDeviceInfo failed to get total global memory",
    "driver_too_old",
    "stack_errors",
)
_rule(
    "driver version is too old",
    r"driver version is too old or does not match CANN",
    "driver_too_old",
    "stack_errors",
)
_rule(
    "version is too low",
    r"maybe (your hdk|you cann) version is too low",
    "version_too_low",
    "stack_errors",
    lambda m: "hdk" if "hdk" in m.group(1) else "cann",
)
_rule(
    "Failed to infer device type",
    r"Failed to infer device type",
    "device_type_unknown",
    "stack_errors",
)
_rule("InvalidVersion", r"InvalidVersion", "invalid_version", "stack_errors")
_rule(
    "source set_env.sh", r"Please run 'source set_env\.sh'", "cann_env_not_sourced", "stack_errors"
)
# Graph mode: refused or fallen back (FAIL) and downgraded by design (WARN)
_rule(
    "Torchair graph mode only works",
    r"Torchair graph mode only works with [^.]{0,200}",
    "torchair_refused",
    "graph_failures",
    _g(0),
)
_rule(
    "graph mode is not supported",
    r"(?:torchair|ACL ?[Gg]raph|aclgraph|[Gg]raph mode) (?:mode )?is not supported "
    r"(?:for|with|on) [^.,;]{1,120}",
    "graph_mode_refused",
    "graph_failures",
    _g(0),
)
_rule(
    "Falling back to V0",
    r"[Ff]alling back to V0",
    "v0_engine_fallback",
    "graph_failures",
    lambda m: "V0",
)
_rule(
    "ack to eager",
    r"[Ff]all(?:ing|s)?[ _-]?back to eager",
    "eager_fallback",
    "graph_failures",
    lambda m: "NONE",
)
_rule(
    "lock_size",
    r"[Bb]lock[ _]size\b[^.\n]{0,80}?\b(?:forced|set|changed|reset|overridden|adjusted)"
    r"\s+to\s+(\d+)",
    "block_size_forced",
    "kv",
    _g(1, _int),
)
_rule(
    "lock size",
    r"[Bb]lock[ _]size\b[^.\n]{0,80}?\b(?:forced|changed|reset|overridden|adjusted)\s+to\s+(\d+)",
    "block_size_forced",
    "kv",
    _g(1, _int),
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
    _g(1, _num),
)
# Stack: harmless warnings and faults
_rule(
    "vllm_ascend_C",
    r"vllm_ascend_C[^\n]{0,300}?(GLIBC_[\d.]+|GLIBCXX_[\d.]+)? not found|"
    r"(?:Failed to import|cannot import)[^\n]{0,80}vllm_ascend[._]C\b[^\n]{0,200}",
    "custom_ops_disabled",
    "stack_errors",
    _g(0),
)
_rule(
    "custom ops will be disabled",
    r"custom ops? will be disabled",
    "custom_ops_disabled",
    "stack_errors",
    _g(0),
)
_rule(
    "Failed to import from vllm._C",
    r"Failed to import from vllm\._C",
    "vllm_c_missing_harmless",
    "graph_notes",
)
# Resources that kill a start
_rule(
    "/dev/shm",
    r"(?:memory available in /dev/shm|/dev/shm[^\n]{0,80}(?:too small|insufficient|No space))",
    "dev_shm_too_small",
    "stack_errors",
    _g(0),
)
# Engine
_rule(
    "Platform plugin ascend is activated",
    r"Platform plugin ascend is activated",
    "ascend_platform",
    "engine_inits",
)
_rule(
    "server version", r"vLLM API server version ([\w.+\-]+)", "vllm_version", "engine_inits", _g()
)
# MindIE
_rule("Daemon start success", r"Daemon start success", "mindie_daemon_started", "mindie")
_rule("mindieservice_daemon", r"mindieservice_daemon", "mindie_daemon", "mindie")
_rule("MindIE", r"MindIE[-_ ]?(?:LLM|Service|Server)?", "mindie_line", "mindie", _g(0))

_ENGINE_RE = re.compile(r"Initializing an? (?:(V\d) )?LLM engine \(v([^)]+)\)")
_CUDAGRAPH_RE = re.compile(
    r"['\"]cudagraph_mode['\"]\s*:\s*(<[\w.]+:\s*-?\d+>|\[[\d,\s]*\]|-?\d+|['\"][\w.]+['\"]|[\w.]+)"
)
_LEVEL_RE = re.compile(r"['\"](?:level|mode)['\"]\s*:\s*(<[\w.]+:\s*-?\d+>|\d+|['\"][\w.]+['\"])")
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
_KV_RE = re.compile(
    r"(?:^|[\s,({])['\"]?(" + "|".join(_KV_KEYS) + r")['\"]?\s*[=:]\s*"
    r"('[^']{0,4096}'|\"[^\"]{0,4096}\"|[^,\s)}]{1,256})"
)
_USAGE_RE = re.compile(r"GPU KV cache usage: ([\d.]+)%")


def _literal(raw: str) -> Scalar:
    if len(raw) >= 2 and raw[0] == raw[-1] and raw[0] in "'\"":
        return raw[1:-1]
    if raw in ("None", "null"):
        return None
    if raw in ("True", "true"):
        return True
    if raw in ("False", "false"):
        return False
    try:
        return int(raw)
    except ValueError:
        pass
    try:
        return float(raw)
    except ValueError:
        return raw


def _excerpt(line: str, start: int, end: int) -> str:
    """The line, or on a long line a window around [start, end)."""
    if len(line) <= _EXCERPT:
        return line.strip()
    half = max((_EXCERPT - (end - start)) // 2, 40)
    lo = max(start - half, 0)
    hi = min(max(end + half, lo + _EXCERPT), len(line))
    return ("…" if lo else "") + line[lo:hi].strip() + ("…" if hi < len(line) else "")


# --- lifecycle: how far the service got, and how it died ------------------------------------------

# Prefixes that wrap a logged line: "(Worker_TP0 pid=5536) ", "[rank0]: ", a compose service
# "name   | ", vLLM's "ERROR 11-10 01:25:12 [file.py:671] " and Ray's "… worker_base.py:572] ".
_PREFIX_RE = re.compile(
    r"(?:\((?:[\w.\-]+) pid=\d+[^)]{0,60}\) ?"
    r"|\[rank\d+\]: ?"
    r"|[A-Za-z][\w.\-]{0,60} +\| "
    r"|(?:INFO|WARNING|WARN|ERROR|DEBUG|CRITICAL)(?: +\d\d-\d\d \d\d:\d\d:\d\d(?:\.\d+)?)? +"
    r"\[?[\w.\-]+:\d+\] ?)"
)
_FRAME_RE = re.compile(r'^\s+File "([^"]{1,400})", line (\d+), in (\S{1,200})')
_EXC_RE = re.compile(
    r"^((?:[a-z_][\w]*\.){0,6}[A-Z]\w{0,80}(?:Error|Exception|Exit|Interrupt|Failure|Fault|Timeout))"
    r"(?::\s?(.{0,400}))?$"
)
_PYTEST_LOC_RE = re.compile(r"^(\S{1,300}\.py):(\d+): \w+$")
_SRC_RE = re.compile(r"([\w./\-]{1,200}\.(?:py|cpp|cc|c|h|hpp|ts)):(\d+)")
_PTA_TAIL_RE = re.compile(
    r"\[ERROR\] \d{4}-\d\d-\d\d-[\d:.]+ \(PID:\d+, Device:-?\d+, RankID:-?\d+\) "
    r"(ERR\d{5})(.{0,120})"
)
_ACCESS_RE = re.compile(r'"(GET|POST|PUT|DELETE) (/\S{0,200}) HTTP/[\d.]+" (\d{3})')
_OP_NAME_RE = re.compile(
    r"\b(?:op(?:_?type|_?name)?|Op ?(?:Type|Name)|kernel(?:_name)?|node)\s*[=:\[]\s*\[?['\"]?"
    r"([A-Za-z_][\w.]{1,80})"
    r"|\b(aclnn[A-Z]\w{1,60})\b"
)
# (trigger substring, regex, kind): a line that proves the service died or cannot start.
_FATAL: list[tuple[str, re.Pattern[str], str]] = [
    (t, re.compile(p), k)
    for t, p, k in (
        ("EngineCore failed to start", r"EngineCore failed to start", "engine_core_failed"),
        (
            "Engine core initialization failed",
            r"Engine core initialization failed",
            "engine_core_failed",
        ),
        ("WorkerProc hit an exception", r"WorkerProc hit an exception", "worker_failed"),
        ("WorkerProc failed to start", r"WorkerProc failed to start", "worker_failed"),
        ("died unexpectedly", r"Engine core proc \S+ died unexpectedly", "engine_core_died"),
        ("died unexpectedly", r"Worker proc \S+ died unexpectedly", "worker_died"),
        # HCCL communicator creation failed (HCCL's own log, MindIE/ATB runners): no collective
        # can run, so the service cannot serve
        ("HcclCommInitRootInfo", r"HcclCommInitRootInfo\w* fail\w*[^\n]{0,80}", "hccl_init_failed"),
        ("exited with code", r"\b(?:server|process|service) exited with code [1-9]\d*", "exited"),
        (
            "Start mindie server",
            r"\[?Start mindie server\]?\s*\[?(?:fail|failed|error)\]?",
            "mindie_start_failed",
        ),
        ("Warmup failed", r"Warmup failed[^\n]{0,300}", "mindie_warmup_failed"),
        ("Daemon start fail", r"Daemon start fail\w*", "mindie_start_failed"),
        ("Daemon is killing", r"Daemon is killing", "mindie_daemon_killed"),
        ("running job failed", r"running job failed\. exit code: \d+", "mindie_job_failed"),
        ("Service Startup Failed", r"Service Startup Failed", "mindie_start_failed"),
        ("NPU out of memory", r"NPU out of memory\.?[^\n]{0,200}", "npu_oom"),
        ("open device", r"open device \d+ failed", "device_open_failed"),
        (
            "Set visible device failed",
            r"Set visible device failed[^\n]{0,120}",
            "visible_devices_refused",
        ),
        (
            "ASCEND_RT_VISIBLE_DEVICES",
            r"set ASCEND_RT_VISIBLE_DEVICES:\[[^\]]*\] error[^\n]{0,80}",
            "visible_devices_refused",
        ),
        (
            "memory available in /dev/shm",
            r"exceeds memory available in /dev/shm",
            "dev_shm_too_small",
        ),
        ("Segmentation fault", r"Segmentation fault", "crashed"),
        ("core dumped", r"core dumped", "crashed"),
    )
]
_SHUTDOWN = (
    "Shutdown initiated",
    "Shutting down",
    "shutting down",
    "Received SIGTERM",
    "Received SIGINT",
)
_ENGINES = (
    ("sglang", ("sglang", "SGLang")),
    ("lmdeploy", ("lmdeploy", "LMDeploy")),
    ("tgi", ("text_generation_launcher", "text-generation-launcher", "text_generation_server")),
    ("mindie", ("mindie_llm", "mindie-service", "mindie_service", "mindieservice", "MindIE")),
    ("vllm", ("vLLM", "vllm", "Platform plugin ascend", "non-default args", "LLM engine")),
)
# (trigger, regex, stage, value) for the stage markers that are not already rules above.
_STAGE_RULES: list[tuple[str, re.Pattern[str], str]] = [
    (t, re.compile(p), st)
    for t, p, st in (
        ("non-default args", r"non-default args:", "launched"),
        ("args: Namespace(", r"args: Namespace\(", "launched"),
        ("API server version", r"vLLM API server version", "launched"),
        ("Platform plugin ascend is activated", r"Platform plugin ascend is activated", "launched"),
        ("Start mindie server", r"Start mindie server", "launched"),
        ("restart mindie service daemon", r"restart mindie service daemon", "launched"),
        ("LLM engine", r"Initializing an? (?:V\d )?LLM engine", "configured"),
        ("Loading weights took", r"Loading weights took", "weights_loaded"),
        ("Loading model weights took", r"Loading model weights took", "weights_loaded"),
        ("Model loading took", r"Model loading took", "weights_loaded"),
        ("KV cache size:", r"KV cache size: [\d,]+ tokens", "kv_sized"),
        ("blocks:", r"# (?:npu|NPU|gpu|GPU|cuda|CUDA) blocks: \d+", "kv_sized"),
        ("init engine", r"init engine \(profile, create kv cache", "kv_sized"),
        ("Graph capturing finished", r"Graph capturing finished", "graphs_captured"),
        (
            "is compiled successfully",
            r"Batchsize \d+ is compiled successfully: (\d+)/\1\b",
            "graphs_captured",
        ),
        ("Application startup complete", r"Application startup complete", "server_up"),
        ("Uvicorn running on", r"Uvicorn running on", "server_up"),
        ("Starting vLLM API server", r"Starting vLLM API server", "server_up"),
        ("Daemon start success", r"Daemon start success", "server_up"),
        ("throughput:", r"Avg (?:prompt|generation) throughput: [\d.]+", "serving"),
        ("Generated text:", r"Generated text:", "serving"),
        ("Processed prompts", r"Processed prompts: +100%", "serving"),
    )
]
_VERSION_RULES: list[tuple[str, re.Pattern[str], str]] = [
    (t, re.compile(p), name)
    for t, p, name in (
        ("PyTorch version", r"^PyTorch version\s*:\s*(\S+)", "torch"),
        ("torch", r"^\[(?:pip3?|conda)\]\s+torch==(\S+)", "torch"),
        ("torch", r"^\[(?:pip3?|conda)\]\s+torch[-_]npu==(\S+)", "torch_npu"),
        ("vllm", r"^\[(?:pip3?|conda)\]\s+vllm==(\S+)", "vllm"),
        ("vllm", r"^\[(?:pip3?|conda)\]\s+vllm[-_]ascend==(\S+)", "vllm_ascend"),
        ("vLLM Version", r"^vLLM Version\s*:\s*(\S+)", "vllm"),
        ("vLLM Ascend Version", r"^vLLM Ascend Version\s*:\s*(\S+)", "vllm_ascend"),
        ("API server version", r"vLLM API server version (\S+)", "vllm"),
        ("torch_npu_version", r"'torch_npu_version': '([^']+)'", "torch_npu"),
        ("npu-smi", r"npu-smi (\d\S*)\s+Version:", "driver"),
        ("/usr/local/Ascend/cann-", r"/usr/local/Ascend/cann-(\d[\w.\-]*?)/", "cann"),
        ("mindietorch", r"^\[(?:pip3?|conda)\]\s+mindie[-_]?llm==(\S+)", "mindie"),
    )
]


class _Life:
    """The lifecycle part of a scan: stages, deaths, exceptions, error codes, versions."""

    def __init__(self, scan: _Scan) -> None:
        self.scan = scan
        self.stage_idx = -1
        self.stage_seen: set[str] = set()
        self.in_tb = False
        self.frame: tuple[str, str] | None = None
        self.exc: LogHit | None = None
        self.exc_where: str | None = None
        self.exc_name = ""
        self.death: LogHit | None = None
        self.died_at = 0  # line of the last fatal event (0: none)
        self.progress_after = False
        self.shutdown = False
        self.serving = 0
        self.models_404 = 0
        self.codes: dict[tuple[str, str], int] = {}
        self.operators: list[str] = []
        self.engine_votes: dict[str, int] = {}
        self.votes = 0
        self.cann_block = False
        self.collect_env = False
        self.block_until = 0  # error block: the scanner reads every line up to here

    def stage(self, name: str, lineno: int, text: str) -> None:
        idx = STAGES.index(name)
        if name not in self.stage_seen:
            self.stage_seen.add(name)
            self.scan.hit(f"stage_{name}", "lifecycle", name, lineno, text)
        if self.died_at and idx <= 1:
            # A new launch after a death: a restart; the earlier death stays in `deaths`.
            self.died_at = 0
            self.exc = None
            self.exc_where = None
            self.death = None
            self.stage_idx = idx
            return
        if self.died_at and idx >= 5:
            self.progress_after = True
        self.stage_idx = max(self.stage_idx, idx)

    def fatal(self, kind: str, lineno: int, text: str, value: Scalar = None) -> None:
        if self.shutdown:
            return
        self.scan.hit(kind, "deaths", value if value is not None else kind, lineno, text)
        self.died_at = lineno
        self.progress_after = False
        if self.death is None or self.death.signal not in ("final_exception",):
            self.death = LogHit(
                kind, value if value is not None else kind, self.scan.source, lineno, text
            )
        self.block_until = max(self.block_until, lineno + 64)

    def line(self, lineno: int, line: str) -> None:
        pos = 0
        while True:
            m = _PREFIX_RE.match(line, pos)
            if not m or m.end() == pos:
                break
            pos = m.end()
        body = line[pos:] if pos else line
        self._codes(lineno, line)
        if body.lstrip().startswith('File "'):
            fm = _FRAME_RE.match(body)
            if fm:
                self.frame = (fm.group(1), fm.group(2))
                self.block_until = max(self.block_until, lineno + 64)
                return
        if "Traceback (most recent call last)" in body:
            if not body.startswith((" ", "\t")):
                self.in_tb = True
                self.frame = None
            self.block_until = max(self.block_until, lineno + 400)
            return
        if body.startswith("E   "):  # pytest's report of the raised exception
            body = body[1:].lstrip()
            self.in_tb = True
        elif self.exc is not None and self.exc_where is None and body.endswith(self.exc_name):
            pm = _PYTEST_LOC_RE.match(body)
            if pm:  # pytest: "path/worker.py:227: AssertionError"
                self.exc_where = f"{pm.group(1)}:{pm.group(2)}"
                return
        if body[:1].isalpha():
            em = _EXC_RE.match(body.rstrip())
            if em and (self.in_tb or em.group(2)):
                self._exception(em, lineno, line, body)
        for trigger, rx, kind in _FATAL:
            if trigger in body:
                fm2 = rx.search(body)
                if fm2:
                    self.fatal(kind, lineno, _excerpt(line, 0, len(line)), _clip(fm2.group(0)))
        if "[ERROR]" in body and "ERR" in body:
            tm = _PTA_TAIL_RE.search(body)
            if tm:
                self.fatal("torch_npu_error", lineno, _excerpt(line, 0, len(line)), tm.group(1))
        if any(s in body for s in _SHUTDOWN) and "died unexpectedly" not in body:
            self.shutdown = True
            self.scan.hit("shutdown", "lifecycle", "shutdown", lineno, _excerpt(line, 0, len(line)))
        for trigger, rx, st in _STAGE_RULES:
            if trigger in body and rx.search(body):
                self.stage(st, lineno, _excerpt(line, 0, len(line)))
        if "HTTP/" in body:
            am = _ACCESS_RE.search(body)
            if am:
                self.access(am.group(2), am.group(3), lineno, line)
        if self.died_at and lineno <= self.block_until:
            om = _OP_NAME_RE.search(body)
            if om and len(self.operators) < 16:
                name = om.group(1) or om.group(2)
                if name and name not in self.operators:
                    self.operators.append(name)
        for trigger, rx, name in _VERSION_RULES:
            if trigger in body:
                vm = rx.search(body)
                if vm:
                    self.scan.hit(f"version_{name}", "versions", vm.group(1), lineno, _clip(body))
        if body.startswith("CANN:") or body.startswith("Collecting environment information"):
            self.collect_env = True
            self.cann_block = body.startswith("CANN:")
        elif self.cann_block and body.startswith("version="):
            self.scan.hit("version_cann", "versions", body[8:].strip(), lineno, _clip(body))
            self.cann_block = False
        if self.votes < 64:
            for names in _ENGINES:
                if any(n in body for n in names[1]):
                    self.engine_votes[names[0]] = self.engine_votes.get(names[0], 0) + 1
                    self.votes += 1
                    break

    def access(self, path: str, status: str, lineno: int, line: str) -> None:
        if status.startswith("2") and not path.startswith(("/health", "/metrics", "/ping")):
            self.serving += 1
            if self.serving == 1:
                self.stage("serving", lineno, _excerpt(line, 0, len(line)))
            elif self.died_at:
                self.progress_after = True
        elif status == "404" and path.startswith("/v1/models"):
            self.models_404 += 1
            if self.models_404 == 3:
                self.fatal("models_404", lineno, _excerpt(line, 0, len(line)), "GET /v1/models 404")
        elif status.startswith("5"):
            self.scan.hit("http_5xx", "deaths", status, lineno, _excerpt(line, 0, len(line)))

    def _exception(self, em: re.Match[str], lineno: int, line: str, body: str) -> None:
        name, msg = em.group(1), (em.group(2) or "").strip()
        where = None
        if self.frame is not None:
            where = f"{self.frame[0]}:{self.frame[1]}"
        else:
            sm = _SRC_RE.search(msg)
            if sm:
                where = f"{sm.group(1)}:{sm.group(2)}"
        self.in_tb = False
        self.frame = None
        text = _clip(f"{name}: {msg}" if msg else name)
        if name in ("KeyboardInterrupt", "SystemExit") or self.shutdown:
            return
        hit = LogHit(
            "final_exception", text, self.scan.source, lineno, _excerpt(line, 0, len(line))
        )
        self.scan.hit("final_exception", "deaths", text, lineno, hit.text)
        self.exc, self.exc_where, self.exc_name = hit, where, name
        self.death = hit
        self.died_at = lineno
        self.progress_after = False
        self.block_until = max(self.block_until, lineno + 64)

    def _codes(self, lineno: int, line: str) -> None:
        if not _CODE_HINT_RE.search(line):
            return
        from ascend_audit.facts.error_codes import find_codes

        for code, kind, start, end in find_codes(line):
            key = (kind, code)
            n = self.codes.get(key, 0)
            self.codes[key] = n + 1
            if n == 0 and len(self.codes) <= 64:
                self.scan.hit(
                    "error_code",
                    "error_codes",
                    f"{kind}:{code}",
                    lineno,
                    _excerpt(line, start, end),
                )

    def dead(self) -> bool:
        return bool(self.died_at) and not self.progress_after and not self.shutdown

    def engine_kind(self) -> str | None:
        if not self.engine_votes:
            return None
        for name, _ in _ENGINES:  # a named other engine wins over vLLM mentions
            votes = self.engine_votes.get(name, 0)
            many = name == "mindie" or votes >= self.engine_votes.get("vllm", 0) / 4
            if name != "vllm" and votes >= 1 and many:
                return name
        return "vllm" if "vllm" in self.engine_votes else None


_CODE_HINT_RE = re.compile(
    r"ERR\d|MIE\d|E[A-Z]\d{4}|E[1-9]\d{4}|error code|result =|failed: \d|retCode=|ret ?[=:] ?\d"
    r"|errNo\[0x|error:\s?\d"
)


def _clip(text: str, n: int = 300) -> str:
    text = text.strip()
    return text if len(text) <= n else text[: n - 1] + "…"


_GRAPH_PROOF = ("graph_capture_finished", "aclgraph_replaying", "torchair_compiled")


def _proves_graph(hit: LogHit) -> bool:
    """A line that proves graphs are in effect: capture finished, replay, torchair compiled
    (a capture progress bar proves it only at 100 %)."""
    if hit.signal in _GRAPH_PROOF:
        return True
    return hit.signal == "graph_capturing" and "100%" in hit.text


class _Scan:
    """Mutable accumulator for one scan; frozen into ServingLogFacts at the end."""

    def __init__(self, source: str) -> None:
        self.source = source
        self.cats: dict[str, list[LogHit]] = {c: [] for c in _CATEGORIES}
        self.kept: dict[str, int] = {}
        self.counts: dict[str, int] = {}
        self.values: dict[str, Scalar] = {}
        self.problems: list[str] = []
        self.engine: str | None = None
        self.usage: LogHit | None = None
        self.life = _Life(self)
        self.launch_args: tuple[int, str] | None = None

    def problem(self, msg: str) -> None:
        if len(self.problems) < _MAX_PROBLEMS:
            self.problems.append(msg[:300])

    def hit(self, signal: str, category: str, value: Scalar, lineno: int, text: str) -> None:
        self.counts[signal] = self.counts.get(signal, 0) + 1
        h = LogHit(signal, value, self.source, lineno, text)
        bucket = self.cats[category]
        n = self.kept.get(signal, 0)
        if n < _HITS_PER_SIGNAL:
            bucket.append(h)
            self.kept[signal] = n + 1
        else:
            # Replace this signal's newest kept hit so `last()` stays true.
            for i in range(len(bucket) - 1, -1, -1):
                if bucket[i].signal == signal:
                    bucket[i] = h
                    break
        self.values[signal] = value

    def config_line(self, line: str, lineno: int, from_engine: bool) -> None:
        for m in _KV_RE.finditer(line):
            key, value = m.group(1), _literal(m.group(2))
            if key == "max_seq_len":
                key = "max_model_len"
            self.hit(f"config_{key}", "config", value, lineno, _excerpt(line, m.start(1), m.end()))
        graph = _CUDAGRAPH_RE.search(line)
        if graph:
            mode = _cudagraph_name(graph.group(1))
            sig = "config_cudagraph_mode" if from_engine else "args_cudagraph_mode"
            self.hit(sig, "config", mode, lineno, _excerpt(line, graph.start(), graph.end()))
            if mode == "NONE" and from_engine:
                self.hit(
                    "engine_cudagraph_none",
                    "eager",
                    mode,
                    lineno,
                    _excerpt(line, graph.start(), graph.end()),
                )
        lv = _LEVEL_RE.search(line)
        if lv:
            level = _literal(lv.group(1))
            if isinstance(level, str) and level.startswith("<"):  # <CompilationMode.X: 3>
                level = _int(level.rstrip(">").rsplit(":", 1)[-1].strip())
            if isinstance(level, str):
                level = {"NONE": 0, "VLLM_COMPILE": 3}.get(level.rsplit(".", 1)[-1])
            self.hit(
                "config_compilation_level",
                "config",
                level,
                lineno,
                _excerpt(line, lv.start(), lv.end()),
            )
        ee = re.search(r"enforce_eager['\"]?\s*[=:]\s*True", line)
        if ee:
            self.hit(
                "engine_enforce_eager", "eager", True, lineno, _excerpt(line, ee.start(), ee.end())
            )

    def line(self, lineno: int, line: str) -> None:
        self.life.line(lineno, line)
        if "LLM engine" in line:
            m = _ENGINE_RE.search(line)
            if m:
                kind = m.group(1) or "V0"
                self.engine = kind
                self.values["vllm_version"] = m.group(2)
                self.hit(
                    "engine_init", "engine_inits", kind, lineno, _excerpt(line, m.start(), m.end())
                )
                if "with config:" in line:
                    self.config_line(line, lineno, from_engine=True)
        elif "args: Namespace(" in line or "non-default args:" in line:
            self.config_line(line, lineno, from_engine=False)
            if "non-default args:" in line:
                self.launch_args = (lineno, line[line.index("non-default args:") :])
        if "KV cache usage" in line:
            m = _USAGE_RE.search(line)
            if m:
                pct = _num(m.group(1))
                self.counts["kv_usage_pct"] = self.counts.get("kv_usage_pct", 0) + 1
                if pct is not None and (self.usage is None or pct > (self.usage.value or 0)):  # type: ignore[operator]
                    self.usage = LogHit(
                        "kv_usage_pct", pct, self.source, lineno, _excerpt(line, m.start(), m.end())
                    )
        fallback_seen = False
        for trigger, rx, signal, category, conv in _RULES:
            if trigger in line:
                if fallback_seen and category == "graph_fallbacks":
                    continue  # one downgrade line, one fallback hit
                m = rx.search(line)
                if m:
                    fallback_seen = fallback_seen or category == "graph_fallbacks"
                    self.hit(signal, category, conv(m), lineno, _excerpt(line, m.start(), m.end()))
                    if signal == "max_concurrency":
                        self.values["max_concurrency_tokens"] = _int(m.group(1))
                    elif signal == "graph_capture_finished":
                        self.values["graph_capture_gib"] = _num(m.group(2))
                    elif signal == "npu_blocks":
                        self.values["cpu_blocks"] = _int(m.group(3))
                    elif signal == "model_loading":
                        self.values["weights_gb"] = _num(m.group(1))
                        self.values["weights_load_seconds"] = _num(m.group(2))

    def graph_mode(self) -> str:
        graph = any(_proves_graph(h) for h in self.cats["graph"])
        torchair = any(
            h.signal.startswith("torchair") for h in self.cats["graph"] + self.cats["graph_notes"]
        )
        weak = {"engine_cudagraph_none"}
        eager = any(not (torchair and h.signal in weak) for h in self.cats["eager"])
        if graph and eager:
            return "mixed"
        if graph:
            return "graph"
        return "eager" if eager else "unknown"

    def freeze(self, lines_read: int, long_lines: int) -> ServingLogFacts:
        if self.usage is not None:
            self.cats["kv"].append(self.usage)
        v = self.values
        engine = self.engine
        if engine is None and (self.cats["mindie"]):
            engine = "mindie"
        if long_lines:
            self.problem(f"{long_lines} lines longer than {MAX_LINE_CHARS} characters were cut")
        for sig, n in self.counts.items():
            if n > _HITS_PER_SIGNAL:
                self.problem(f"{sig}: {n} matching lines, {_HITS_PER_SIGNAL} kept (first and last)")
        cudagraph = v.get("config_cudagraph_mode")
        level = v.get("config_compilation_level")

        def f(key: str) -> float | None:
            x = v.get(key)
            return float(x) if isinstance(x, (int, float)) and not isinstance(x, bool) else None

        def i(key: str) -> int | None:
            x = v.get(key)
            if isinstance(x, bool):
                return None
            if isinstance(x, float) and x.is_integer():
                return int(x)
            return x if isinstance(x, int) else None

        def s(key: str) -> str | None:
            x = v.get(key)
            return x if isinstance(x, str) else None

        ee = v.get("config_enforce_eager")
        gmu = f("config_gpu_memory_utilization")
        block = i("config_block_size")
        forced = i("block_size_forced") or i("block_size_forced_128")
        if forced and self.counts.get("kernel_block_size_mismatch", 0) == 0:
            block = forced  # the engine overrode the asked-for block size
        life = self.life
        died = life.dead()
        load_s = f("weights_load_seconds")
        if load_s is None and self.counts.get("weights_progress"):
            load_s = max(
                (
                    float(h.value)
                    for h in self.cats["weights"]
                    if h.signal == "weights_progress" and isinstance(h.value, (int, float))
                ),
                default=None,
            )
        by_category: dict[str, Any] = {
            c: tuple(sorted(self.cats[c], key=lambda h: h.lineno)) for c in _CATEGORIES
        }
        return ServingLogFacts(
            source=self.source,
            lines_read=lines_read,
            long_lines=long_lines,
            engine=engine,
            vllm_version=s("vllm_version"),
            graph_mode=self.graph_mode(),
            enforce_eager=ee if isinstance(ee, bool) else None,
            cudagraph_mode=cudagraph if isinstance(cudagraph, str) else None,
            requested_cudagraph_mode=s("args_cudagraph_mode"),
            compilation_level=level if isinstance(level, int) else None,
            graph_capture_seconds=f("graph_capture_finished"),
            graph_capture_gib=f("graph_capture_gib"),
            npu_blocks=i("npu_blocks"),
            cpu_blocks=i("cpu_blocks"),
            num_gpu_blocks_override=i("num_gpu_blocks_override"),
            kv_cache_tokens=i("kv_cache_tokens"),
            max_concurrency=f("max_concurrency"),
            max_concurrency_tokens=i("max_concurrency_tokens"),
            available_kv_gib=f("available_kv_gib"),
            kv_usage_max_pct=self.usage.value if self.usage else None,  # type: ignore[arg-type]
            block_size=block,
            max_model_len=i("config_max_model_len"),
            gpu_memory_utilization=gmu,
            alloc_conf=s("alloc_conf"),
            weights_load_seconds=load_s,
            weights_gb=f("weights_gb"),
            checkpoint_format=s("checkpoint_format"),
            load_format=s("config_load_format"),
            model=s("config_model"),
            model_path=s("model_path"),
            cpu_offload_gb=f("config_cpu_offload_gb"),
            tensor_parallel_size=i("config_tensor_parallel_size"),
            quantization=s("config_quantization"),
            engine_kind=life.engine_kind(),
            stage=STAGES[life.stage_idx] if life.stage_idx >= 0 else None,
            died=died,
            death=life.death if died else None,
            final_exception=str(life.exc.value) if died and life.exc else None,
            exception_where=life.exc_where if died and life.exc else None,
            failed_operators=tuple(life.operators) if died else (),
            serving_lines=life.serving,
            models_404=life.models_404,
            shut_down=life.shutdown,
            collect_env=life.collect_env,
            launch_args=self.launch_args,
            signal_counts=tuple(sorted(self.counts.items())),
            problems=tuple(self.problems),
            **by_category,
        )


def scan_serving_log(lines: Iterable[tuple[int, str]], source: str) -> ServingLogFacts:
    """Scan (lineno, text) pairs of a serving log in one pass and bounded memory."""
    scan = _Scan(str(source))
    lines_read = 0
    long_lines = 0
    lineno = 0
    try:
        for item in lines:
            try:
                lineno, text = item
                lineno = int(lineno)
            except (TypeError, ValueError):
                scan.problem(f"input item {lines_read + 1} is not a (lineno, text) pair")
                lines_read += 1
                continue
            lines_read += 1
            if isinstance(text, (bytes, bytearray)):
                text = bytes(text[: MAX_LINE_CHARS * 4]).decode("utf-8", errors="replace")
            elif not isinstance(text, str):
                scan.problem(f"line {lineno}: not text ({type(text).__name__})")
                continue
            if len(text) > MAX_LINE_CHARS:
                long_lines += 1
                text = text[:MAX_LINE_CHARS]
            if "\x00" in text:
                text = text.replace("\x00", "")
            scan.line(lineno, text.rstrip("\r\n"))
    except Exception as exc:  # a failing iterator (I/O error) must not crash the audit
        scan.problem(f"reading stopped after line {lineno}: {type(exc).__name__}: {exc}")
    if lines_read == 0:
        scan.problem("log is empty")
    return scan.freeze(lines_read, long_lines)


# --- one fast pass over a file -------------------------------------------------------------------

CHUNK_BYTES = 1 << 20
TAIL_BYTES = 256 * 1024  # the end of a log is read line by line: that is where it dies
HEAD_LINES = 100_000  # until the server is up (or this many lines) every line is read
GARBAGE_SAMPLE = 1 << 20
_BAD_CHARS = "\ufffd" + "".join(chr(c) for c in range(32) if c not in (9, 10, 13, 27))
# After start-up, only lines with one of these can change a verdict: errors (Error, ERROR,
# ERRnnnnn, Exception, CANN E-codes, EngineCore) and warnings (torch_npu's "Warning:" carries the
# fallback and dtype-cast messages). Two first letters keep the regex scan fast; restarts
# ("LLM engine", "vLLM API server"), KV usage, requests and tracebacks are found with
# bytes.find / literal searches over the skipped ranges (see _FileScan.skip).
_MID_RE = re.compile(rb"E(?:rror|RR|xception|ngine ?[Cc]ore|[A-Z]\d{4})|W(?:arning|ARN)")
_RESTART = b"LLM "  # "Initializing a V1 LLM engine", "vLLM API server version"
_TRACEBACK = b"Traceback (most recent call last)"
_USAGE_B_RE = re.compile(rb"KV cache usage: ([\d.]+)%")
_THROUGHPUT = b"throughput: "
_OK_ACCESS = b'HTTP/1.1" 2'
_MODELS_404 = b'/v1/models HTTP/1.1" 404'


def _decode(raw: bytes) -> tuple[str, bool]:
    text = raw[: MAX_LINE_CHARS * 4].decode("utf-8", errors="replace")
    long = len(text) > MAX_LINE_CHARS or len(raw) > MAX_LINE_CHARS * 4
    if long:
        text = text[:MAX_LINE_CHARS]
    if text.endswith("\r"):
        text = text[:-1]
    if "\x00" in text:
        text = text.replace("\x00", "")
    return text, long


def _line_start(block: bytes, lo: int, at: int) -> int:
    """Start of the line holding `at`, not before `lo` (which is a line start)."""
    nl = block.rfind(b"\n", lo, at)
    return lo if nl < 0 else nl + 1


class _FileScan:
    """Chunked reader: every line in the head, the tail and error blocks; candidates elsewhere."""

    def __init__(self, source: str, size: int, fallback: Any) -> None:
        self.scan = _Scan(source)
        self.fallback = fallback
        self.lineno = 0
        self.long_lines = 0
        self.head_from = 0  # line of the last (re)start: the head is read line by line
        self.tail_from = max(0, size - TAIL_BYTES)
        self.sample_bad = 0
        self.sample_seen = 0

    def handle(self, raw: bytes) -> None:
        self.lineno += 1
        text, long = _decode(raw)
        if long:
            self.long_lines += 1
        if self.sample_seen < GARBAGE_SAMPLE:
            self.sample_seen += len(text) + 1
            self.sample_bad += sum(text.count(c) for c in _BAD_CHARS if c in text)
        life = self.scan.life
        before = life.stage_idx
        self.scan.line(self.lineno, text)
        if life.stage_idx <= 1 < before or (before < 0 <= life.stage_idx):
            self.head_from = self.lineno  # a (re)start: read its start-up line by line
        if self.fallback is not None:
            self.fallback.line(self.lineno, text)

    def full(self, offset: int) -> bool:
        life = self.scan.life
        return (
            (life.stage_idx < 5 and self.lineno - self.head_from < HEAD_LINES)
            or self.lineno < life.block_until
            or offset >= self.tail_from
        )

    def _line_at(self, block: bytes, a: int, at: int, end: int) -> tuple[int, str]:
        """(line number, text) of the line holding `at`, inside a skipped range from `a`."""
        ls = _line_start(block, a, at)
        le = block.find(b"\n", at, end)
        le = end if le < 0 else le
        return self.lineno + block.count(b"\n", a, ls) + 1, _decode(block[ls:le])[0]

    def skip(self, block: bytes, a: int, b: int) -> None:
        """Lines [a, b) hold no candidate: count them, their requests and their KV usage."""
        n = block.count(b"\n", a, b)
        scan, life = self.scan, self.scan.life
        ok = block.count(_OK_ACCESS, a, b)
        if ok:
            if life.serving == 0:
                lineno, text = self._line_at(block, a, block.find(_OK_ACCESS, a, b), b)
                life.access("/", "200", lineno, text)
                ok -= 1
            life.serving += ok
            if ok and life.died_at:
                life.progress_after = True
        at = block.find(_MODELS_404, a, b)
        while 0 <= at < b:
            lineno, text = self._line_at(block, a, at, b)
            life.access("/v1/models", "404", lineno, text)
            at = block.find(_MODELS_404, at + len(_MODELS_404), b)
        if life.stage_idx < 6 and block.find(_THROUGHPUT, a, b) >= 0:
            at = block.find(_THROUGHPUT, a, b)
            lineno, text = self._line_at(block, a, at, b)
            if "Avg" in text:
                life.stage("serving", lineno, text)
        usage = 0
        best: tuple[float, int] | None = None
        for m in _USAGE_B_RE.finditer(block, a, b):
            usage += 1
            pct = _num(m.group(1).decode("ascii"))
            if pct is not None and (best is None or pct > best[0]):
                best = (pct, m.start())
        if usage:
            scan.counts["kv_usage_pct"] = scan.counts.get("kv_usage_pct", 0) + usage
            if life.died_at:
                life.progress_after = True
            cur = scan.usage.value if scan.usage is not None else None
            if best is not None and (cur is None or best[0] > cur):  # type: ignore[operator]
                lineno, text = self._line_at(block, a, best[1], b)
                i = max(text.find("GPU KV cache usage"), 0)
                scan.usage = LogHit(
                    "kv_usage_pct", best[0], scan.source, lineno, _excerpt(text, i, i + 30)
                )
        self.lineno += n
        if self.fallback is not None:
            self.fallback.skipped(n)

    def block(self, block: bytes, base: int) -> None:
        """A run of whole lines (ending in a newline, or the last line of the file)."""
        pos, n = 0, len(block)
        restart = -1  # next "LLM " at or after pos (-2: none left in this block)
        while pos < n:
            if self.full(base + pos):
                nl = block.find(b"\n", pos)
                nl = n if nl < 0 else nl
                self.handle(block[pos:nl])
                pos = nl + 1
                continue
            stop = n if base + n <= self.tail_from else max(pos, self.tail_from - base)
            if restart != -2 and restart < pos:
                restart = block.find(_RESTART, pos, stop)
                restart = -2 if restart < 0 else restart
            m = _MID_RE.search(block, pos, restart if restart >= 0 else stop)
            at = m.start() if m is not None else restart
            if at < 0:
                # Up to `stop`, then (if the tail starts inside this block) line by line.
                cut = block.rfind(b"\n", pos, stop) + 1 if stop < n else n
                cut = max(cut, pos)
                self.skip(block, pos, cut)
                if cut == pos and stop < n:
                    nl = block.find(b"\n", pos)
                    nl = n if nl < 0 else nl
                    self.handle(block[pos:nl])
                    cut = nl + 1
                pos = cut
                continue
            ls = _line_start(block, pos, at)
            tb = block.find(_TRACEBACK, pos, ls)
            if tb >= 0:  # a bare traceback before this error line: read it whole
                ls = _line_start(block, pos, tb)
            self.skip(block, pos, ls)
            nl = block.find(b"\n", max(at, ls))
            nl = n if nl < 0 else nl
            if tb >= 0:
                for line in block[ls:nl].split(b"\n"):
                    self.handle(line)
            else:
                self.handle(block[ls:nl])
            pos = nl + 1


def scan_serving_log_file(
    path: str,
    source: str | None = None,
    progress: Callable[[int, int], None] | None = None,
    fallbacks: bool = True,
) -> ServingLogFacts:
    """Scan a serving log file once, in 1 MiB chunks and bounded memory; the operator layer's
    fallback warnings are collected in the same pass (`facts.fallback`). Raises OSError only."""
    from dataclasses import replace

    from ascend_audit.facts.fallback_log import FallbackScanner

    src = str(source if source is not None else path)
    with open_regular(path) as fh:
        try:
            size = os.fstat(fh.fileno()).st_size
        except OSError:
            size = 0
        fs = _FileScan(src, size, FallbackScanner(src) if fallbacks else None)
        pending = b""
        done = 0
        skipping = False
        while True:
            data = fh.read(CHUNK_BYTES)
            if not data:
                break
            base = done - len(pending)
            done += len(data)
            buf = pending + data if pending else data
            if skipping:  # the rest of an over-long line
                nl = buf.find(b"\n")
                if nl < 0:
                    pending = b""
                    continue
                base += nl + 1
                buf = buf[nl + 1 :]
                skipping = False
            end = buf.rfind(b"\n") + 1
            if end == 0:
                if len(buf) > MAX_LINE_CHARS * 4:
                    fs.handle(buf[: MAX_LINE_CHARS * 4 + 1])
                    pending, skipping = b"", True
                else:
                    pending = buf
                continue
            fs.block(buf[:end], base)
            pending = buf[end:]
            if progress is not None:
                progress(done, size)
        if pending and not skipping:
            fs.block(pending, done - len(pending))
    facts = fs.scan.freeze(fs.lineno, fs.long_lines)
    if fs.lineno == 0:
        facts = replace(facts, problems=(*facts.problems, "log is empty"))
    share = fs.sample_bad / fs.sample_seen if fs.sample_seen else 0.0
    summary = fs.fallback.summary() if fs.fallback is not None else None
    return replace(facts, binary_share=round(share, 4), fallback=summary)
