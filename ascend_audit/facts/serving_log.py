"""Streaming scanner for vLLM / vllm-ascend / MindIE serving logs: what took effect at startup."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any, Union

from ascend_audit.safe_io import open_regular

__all__ = [
    "MAX_LINE_CHARS",
    "LogHit",
    "ServingLogFacts",
    "read_text_lines",
    "scan_serving_log",
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
    r"['\"]cudagraph_mode['\"]\s*:\s*(\[[\d,\s]*\]|-?\d+|['\"][\w.]+['\"]|[\w.]+)"
)
_LEVEL_RE = re.compile(r"['\"](?:level|mode)['\"]\s*:\s*(\d+|['\"][\w.]+['\"])")
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
        m = _CUDAGRAPH_RE.search(line)
        if m:
            mode = _cudagraph_name(m.group(1))
            sig = "config_cudagraph_mode" if from_engine else "args_cudagraph_mode"
            self.hit(sig, "config", mode, lineno, _excerpt(line, m.start(), m.end()))
            if mode == "NONE" and from_engine:
                self.hit(
                    "engine_cudagraph_none",
                    "eager",
                    mode,
                    lineno,
                    _excerpt(line, m.start(), m.end()),
                )
        m = _LEVEL_RE.search(line)
        if m:
            level = _literal(m.group(1))
            if isinstance(level, str):
                level = {"NONE": 0, "VLLM_COMPILE": 3}.get(level.rsplit(".", 1)[-1])
            self.hit(
                "config_compilation_level",
                "config",
                level,
                lineno,
                _excerpt(line, m.start(), m.end()),
            )
        ee = re.search(r"enforce_eager['\"]?\s*[=:]\s*True", line)
        if ee:
            self.hit(
                "engine_enforce_eager", "eager", True, lineno, _excerpt(line, ee.start(), ee.end())
            )

    def line(self, lineno: int, line: str) -> None:
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
        graph = bool(self.cats["graph"])
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
            weights_load_seconds=f("weights_load_seconds"),
            weights_gb=f("weights_gb"),
            checkpoint_format=s("checkpoint_format"),
            load_format=s("config_load_format"),
            model=s("config_model"),
            model_path=s("model_path"),
            cpu_offload_gb=f("config_cpu_offload_gb"),
            tensor_parallel_size=i("config_tensor_parallel_size"),
            quantization=s("config_quantization"),
            signal_counts=tuple(sorted(self.counts.items())),
            problems=tuple(self.problems),
            **{c: tuple(sorted(self.cats[c], key=lambda h: h.lineno)) for c in _CATEGORIES},
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
