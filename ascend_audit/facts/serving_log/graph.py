"""Graph-mode evidence: eager proof, capture and replay, fallbacks, refusals and notes."""

from __future__ import annotations

import re

from ascend_audit.facts.serving_log.model import LogHit
from ascend_audit.facts.serving_log.values import Rules, as_int, as_num, group

_CUDAGRAPH_INT = {"0": "NONE", "1": "PIECEWISE", "2": "FULL"}
_CUDAGRAPH_PAIR = {("2", "0"): "FULL_DECODE_ONLY", ("2", "1"): "FULL_AND_PIECEWISE"}


def cudagraph_name(raw: str) -> str:
    raw = raw.strip().strip("'\"").strip()
    if raw.startswith("<"):  # enum repr: <CUDAGraphMode.PIECEWISE: 1>
        raw = raw[1:].split(":", 1)[0]
    if raw in _CUDAGRAPH_INT:
        return _CUDAGRAPH_INT[raw]
    if raw.startswith("["):
        parts = tuple(p.strip() for p in raw.strip("[]").split(","))
        return _CUDAGRAPH_PAIR.get(parts, raw)  # type: ignore[arg-type]
    return raw.rsplit(".", 1)[-1].upper()


RULES = Rules()
_rule = RULES.add

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
    group(0),
)
_rule(  # vllm-ascend 0.7
    "Graph capture is not supported on NPU",
    r"Graph capture is not supported on NPU",
    "npu_no_graph_capture",
    "eager",
    group(0),
)
_rule(
    "Skipping NPU graph capture for eager mode",
    r"Skipping NPU graph capture for eager mode",
    "skip_graph_capture_eager",
    "eager",
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
    group(),
)
_rule(
    "Graph capturing finished",
    r"Graph capturing finished in ([\d.]+) secs?, took (-?[\d.]+) GiB",
    "graph_capture_finished",
    "graph",
    group(1, as_num),
)
_rule("Replaying aclgraph", r"Replaying aclgraph", "aclgraph_replaying", "graph")
_rule("Capturing torchair graph", r"Capturing torchair graph", "torchair_capturing", "graph")
_rule(
    "is compiled successfully",
    r"Batchsize (\d+) is compiled successfully: (\d+)/(\d+)",
    "torchair_compiled",
    "graph",
    group(1, as_int),
)
# Graph mode: fallbacks / downgrades
_rule(
    "not support on NPU",
    r"(\w+) cudagraph_mode is not support on NPU\. falling back to (\w+)",
    "cudagraph_unsupported_fallback",
    "graph_fallbacks",
    group(2),
)
_rule(
    "fallback to",
    r"don't support (\S+), fallback to (\w+)",
    "encoder_decoder_fallback",
    "graph_fallbacks",
    group(2),
)
_rule(  # "NPU does not support X compilation level. Setting CUDAGraphMode to NONE" (0.10-0.13),
    # "NPU does not support compilation mode. mode=X, action: setting CUDAGraphMode to NONE."
    "NPU does not support",
    r"NPU does not support (?:\S+ )?compilation (?:level|mode)\b[^\n]{0,120}?"
    r"[Ss]etting CUDAGraphMode to (\w+)",
    "compilation_unsupported_fallback",
    "graph_fallbacks",
    group(),
)
_rule(
    "etting cudagraph_mode=",
    r"[Ss]etting cudagraph_mode=(\w+)",
    "cudagraph_mode_reset",
    "graph_fallbacks",
    group(),
)
_rule(
    "under xlite",
    r"Falling back to (\w+) under xlite",
    "xlite_fallback",
    "graph_fallbacks",
    group(),
)
_rule(  # xlite full mode runs the whole model as its own graph: ACL graph is off by design
    "xlite full mode",
    r"ACLGraph (?:has been|is) disabled\b[^\n]{0,80}?xlite full mode",
    "aclgraph_disabled",
    "graph_fallbacks",
    lambda m: "XLITE_FULL",
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
    group(),
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
    r"ACL Graph does not support \w+",
    "aclgraph_unsupported_model",
    "graph_failures",
    group(0),
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
    group(4, as_int),
)
_rule(
    "Calculated maximum supported batch sizes",
    r"Calculated maximum supported batch sizes for ACL graph: (\d+)",
    "max_graph_batch_sizes",
    "graph_notes",
    group(1, as_int),
)
_rule(
    "compilation enabled on NPU",
    r"\b(PIECEWISE|FULL(?:_DECODE_ONLY|_AND_PIECEWISE)?) compilation enabled on NPU",
    "npu_compilation_mode",
    "graph_notes",
    group(),
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
# Graph mode: refused or fallen back (FAIL) and downgraded by design (WARN)
_rule(
    "Torchair graph mode only works",
    r"Torchair graph mode only works with [^.]{0,200}",
    "torchair_refused",
    "graph_failures",
    group(0),
)
_rule(  # vLLM and vllm-ascend raise this when no full graph fits the attention backend
    "is not supported",
    r"\b(?:CUDA|ACL)GraphMode\.(\w+) is not supported (?![^\n]*setting cudagraph_mode=)"
    r"[^\n]{0,300}",
    "graph_mode_refused",
    "graph_failures",
    group(0),
)
_rule(  # vllm-ascend 0.8-0.9: asked-for graph mode switched off at start-up
    "has been disabled automatically",
    r"(?:Torchair|NPU) graph mode is still experimental and not supported for [^,]{1,120}",
    "graph_mode_refused",
    "graph_failures",
    group(0),
)
_rule(
    "graph mode is not supported",
    r"(?:torchair|ACL ?[Gg]raph|aclgraph|[Gg]raph mode) (?:mode )?is not supported "
    r"(?:for|with|on) [^.,;]{1,120}",
    "graph_mode_refused",
    "graph_failures",
    group(0),
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

CUDAGRAPH_RE = re.compile(
    r"['\"]cudagraph_mode['\"]\s*:\s*(<[\w.]+:\s*-?\d+>|\[[\d,\s]*\]|-?\d+|['\"][\w.]+['\"]|[\w.]+)"
)
LEVEL_RE = re.compile(r"['\"](?:level|mode)['\"]\s*:\s*(<[\w.]+:\s*-?\d+>|\d+|['\"][\w.]+['\"])")

_REQUESTED_RES = (
    re.compile(r"\b(?:CUDAGraphMode\.|ACLGraphMode\.|cudagraph_mode=)(\w+) is not supported"),
    re.compile(r"\b(\S+) cudagraph_mode is not support"),
    re.compile(r"don't support (\w+), fallback to"),
    re.compile(
        r"NPU does not support (?:(\S+) compilation level|compilation mode\. mode=(\w[\w.]*))"
    ),
)


def requested_of(hit: LogHit) -> str | None:
    """The mode a downgrade or fallback line says was asked for ("CUDAGraphMode.FULL is not
    supported …; setting cudagraph_mode=FULL_DECODE_ONLY" → "FULL"), else None."""
    for rx in _REQUESTED_RES:
        m = rx.search(hit.text)
        if m:
            raw = next(g for g in m.groups() if g)
            if rx is _REQUESTED_RES[-1]:
                return f"compilation {cudagraph_name(raw)}"
            return cudagraph_name(raw)
    return None


_REASON_RE = re.compile(r"\b(not support(?:ed)? [^;]{1,200})|\b(under xlite[^;.]{0,80})")


def fallback_reason(hit: LogHit) -> str:
    """Why a fallback line says the engine changed the mode ("not supported with AscendMLABackend
    backend (support: AttentionCGSupport.UNIFORM_BATCH)"), else the line."""
    m = _REASON_RE.search(hit.text)
    return (m.group(1) or m.group(2)).strip() if m else hit.text[:200]


GRAPH_PROOF = ("graph_capture_finished", "aclgraph_replaying", "torchair_compiled")


def proves_graph(hit: LogHit) -> bool:
    """A line that proves graphs are in effect: capture finished, replay, torchair compiled
    (a capture progress bar proves it only at 100 %)."""
    if hit.signal in GRAPH_PROOF:
        return True
    return hit.signal == "graph_capturing" and "100%" in hit.text


def graph_mode(cats: dict[str, list[LogHit]]) -> str:
    """ "graph", "eager", "mixed" or "unknown", from the graph, graph_notes and eager hits."""
    graph = any(proves_graph(h) for h in cats["graph"])
    torchair = any(h.signal.startswith("torchair") for h in cats["graph"] + cats["graph_notes"])
    weak = {"engine_cudagraph_none"}
    eager = any(not (torchair and h.signal in weak) for h in cats["eager"])
    if graph and eager:
        return "mixed"
    if graph:
        return "graph"
    return "eager" if eager else "unknown"
