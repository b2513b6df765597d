"""The facts a serving-log scan yields: one hit per proving line, and the frozen summary."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Union

MAX_LINE_CHARS = 64 * 1024
HITS_PER_SIGNAL = 16  # first N-1 kept, the last slot always holds the newest hit
MAX_PROBLEMS = 100

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


CATEGORIES = (
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
    first_cause: LogHit | None = None  # the first line since the last progress that says why
    first_cause_where: str | None = None  # file:line, when the first cause is an exception
    failed_operators: tuple[str, ...] = ()  # operators named in device error blocks
    operator_failure: LogHit | None = None  # a death's operator-level failure (value: its kind)
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
        out = [h for cat in CATEGORIES for h in getattr(self, cat)]
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
            if name in CATEGORIES:
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
