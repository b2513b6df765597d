"""FWK-GRAPH-001: the serving engine runs in graph mode, as requested, with a compatible env."""

from __future__ import annotations

from typing import Any

from ascend_audit.context import Context
from ascend_audit.facts.framework_inputs import PROBE, SERVING_CONFIGS
from ascend_audit.model import Evidence, Outcome, fail, passed, skip, warn, worst
from ascend_audit.registry import check

from .inputs import (
    cannot_judge,
    configs,
    engine_of,
    hit_evidence,
    item_evidence,
    logs,
    serving_env,
    unless_dead,
)

_EAGER_FIX = (
    "Drop --enforce-eager and any cudagraph_mode NONE; on vllm-ascend >= 0.12 graph mode "
    "(ACLGraph) is the default. If a model needs eager mode, waive this check with the reason."
)
_ENV_FIX = "Unset ASCEND_LAUNCH_BLOCKING (debug only) and use TASK_QUEUE_ENABLE=1 (or 0)."


def _eager(ctx: Context, cfgs: list[Any], scans: list[Any]) -> list[Outcome]:
    """Eager mode from the configs (asked for) and the logs (in effect)."""
    ev: list[Evidence] = []
    for cfg in cfgs:
        for key, on in (
            ("enforce_eager", cfg.enforce_eager),
            ("cudagraph_mode", cfg.cudagraph_mode == "NONE"),
        ):
            item = cfg.item(key) or (
                cfg.item("compilation_config") if key != "enforce_eager" else None
            )
            if on and item:
                ev.append(item_evidence(item))
    for f in scans:
        if f.graph_mode in ("eager", "mixed"):
            ev += [hit_evidence(h) for h in f.eager[:3]]
    if not ev:
        return []
    where = ev[0].source + (f" and {len(ev) - 1} more" if len(ev) > 1 else "")
    if not ctx.policy["framework.require_graph_mode"]:
        return [passed(f"eager mode ({where}); the policy does not require graph mode", ev)]
    return [fail(f"serving runs eager ({where}); the policy requires graph mode", ev, _EAGER_FIX)]


def _requested(cfgs: list[Any], f: Any, hit: Any = None) -> tuple[str | None, Evidence | None]:
    """What was asked for: as the fallback line itself names it, else the configs, else the
    log's launch arguments."""
    from ascend_audit.facts.serving_log.graph import requested_of

    named = requested_of(hit) if hit is not None else None
    for cfg in cfgs:
        item = cfg.item("cudagraph_mode") or cfg.item("compilation_config")
        if cfg.cudagraph_mode and item:
            return named or cfg.cudagraph_mode, item_evidence(item)
    if f.requested_cudagraph_mode:
        args = f.last("args_cudagraph_mode")
        return named or f.requested_cudagraph_mode, hit_evidence(args) if args else None
    return named, None


_WEAKER = ("PIECEWISE", "FULL_DECODE_ONLY", "FULL_AND_PIECEWISE", "FULL", "XLITE_FULL")
_REFUSED_FIX = {
    "torchair_refused": "Torchair graph mode does not support this model: use ACL graph "
    "(--compilation-config cudagraph_mode) or a model torchair supports.",
    "graph_mode_refused": "The engine refused the graph mode for this model: choose a "
    "cudagraph_mode the model supports, or upgrade vllm-ascend.",
    "aclgraph_unsupported_model": "ACL graph does not support this model: use torchair graph "
    "mode (vllm-ascend <= 0.11) or a release that supports it.",
    "v0_engine_fallback": "The V1 engine fell back to V0 (no graph mode on NPU): remove the "
    "setting the log names, or upgrade vLLM / vllm-ascend.",
    "eager_fallback": "The engine fell back to eager mode: fix what the log names before it.",
}
_CAPTURE_FIX = (
    "Stream / SQ-CQ exhaustion: reduce cudagraph_capture_sizes or TP, set "
    "HCCL_OP_EXPANSION_MODE=AIV, upgrade the driver (HDK >= 25.5.1 for FULL_AND_PIECEWISE)."
)


def _fallbacks(cfgs: list[Any], scans: list[Any]) -> list[Outcome]:
    """A fallback line: to NONE (eager) is a FAIL; to a weaker graph mode, by design, a WARN."""
    from ascend_audit.facts.serving_log.graph import fallback_reason

    out = []
    for f in scans:
        for hit in f.graph_fallbacks[:2]:
            req, req_ev = _requested(cfgs, f, hit)
            eff = hit.value if isinstance(hit.value, str) else f.cudagraph_mode
            text = (
                f"requested cudagraph_mode {req or '(default)'} but {eff} took effect "
                f"({hit.source}:{hit.lineno})"
            )
            ev = [e for e in (req_ev, hit_evidence(hit)) if e]
            if eff in _WEAKER:
                out.append(
                    warn(
                        f"{text}: the engine downgraded it by design ({fallback_reason(hit)})",
                        ev,
                        "A downgrade the engine makes for this model (e.g. MLA attention "
                        "supports FULL only for decode); ask for the mode it runs to silence it.",
                    )
                )
                continue
            out.append(
                fail(
                    text,
                    ev,
                    "Use a cudagraph_mode the model and vllm-ascend support on NPU (see the "
                    "fallback line), or upgrade vllm-ascend / the driver.",
                )
            )
    return out


def _silent(scans: list[Any]) -> list[Outcome]:
    """The launch asked for one cudagraph_mode, the engine config line shows another, and no
    line says why (vllm-ascend 0.11 turns FULL_AND_PIECEWISE into PIECEWISE without a word)."""
    out = []
    for f in scans:
        req, eff = f.requested_cudagraph_mode, f.cudagraph_mode
        asked, shown = f.last("args_cudagraph_mode"), f.last("config_cudagraph_mode")
        if f.graph_fallbacks or not (asked and shown) or req == eff or req == "NONE":
            continue
        if eff == "NONE" and (f.enforce_eager or f.last("torchair_enabled")):
            continue  # eager asked for elsewhere, or torchair (its own graph) by design
        text = (
            f"requested cudagraph_mode {req} ({asked.source}:{asked.lineno}) but the engine "
            f"config shows {eff} ({shown.source}:{shown.lineno}), with no line saying why"
        )
        ev = [hit_evidence(asked), hit_evidence(shown)]
        if eff in _WEAKER:
            out.append(warn(text, ev, "Ask for the mode this vllm-ascend runs, or upgrade it."))
        else:
            out.append(fail(text, ev, _EAGER_FIX))
    return out


def _failures(scans: list[Any]) -> list[Outcome]:
    out = []
    for f in scans:
        for hit in f.graph_failures[:3]:
            refused = hit.signal in _REFUSED_FIX
            what = "graph mode refused" if refused else "graph capture failed"
            out.append(
                fail(
                    f"{what}: {hit.signal} ({hit.source}:{hit.lineno}): {str(hit.value)[:160]}",
                    [hit_evidence(hit)],
                    _REFUSED_FIX.get(hit.signal, _CAPTURE_FIX),
                )
            )
        capture = f.last("graph_capturing") or f.last("capture_frame")
        finished = any(h.signal == "graph_capture_finished" for h in f.graph)
        if f.died and capture and f.death and capture.lineno < f.death.lineno and not finished:
            out.append(
                fail(
                    f"the engine died while capturing graphs ({capture.source}:"
                    f"{capture.lineno} → {f.death.source}:{f.death.lineno}: "
                    f"{str(f.death.value)[:120]})",
                    [hit_evidence(capture), hit_evidence(f.death)],
                    "Graph capture of this model/feature fails on this stack: run it "
                    "without the feature (or eager) until vllm-ascend supports it.",
                )
            )
    return out


def _pruned(scans: list[Any]) -> list[Outcome]:
    """ACL graph capture sizes cut to a handful: most batch sizes then run eager."""
    out = []
    for f in scans:
        hit = f.last("capture_sizes_adjusted") or f.last("max_graph_batch_sizes")
        if hit is not None and isinstance(hit.value, int) and hit.value <= 8:
            out.append(
                warn(
                    f"only {hit.value} ACL graph batch sizes fit ({hit.source}:{hit.lineno}); "
                    "other batch sizes run without a graph",
                    [hit_evidence(hit)],
                    "Set HCCL_OP_EXPANSION_MODE=AIV (FFTS+ uses streams), lower TP/PP per node, "
                    "or upgrade vllm-ascend (>= 0.21 no longer prunes capture sizes).",
                )
            )
    return out


def _va_version(ctx: Context, scans: list[Any]) -> tuple[int, ...] | None:
    from ascend_audit.facts.compat import base_version

    run = ctx.fact(PROBE)
    ver = run.facts.package("vllm_ascend") if run.facts is not None else None
    ver = ver or next((f.vllm_version for f in scans if f.vllm_version), None)
    return base_version(ver) or None if ver else None


def _legacy(ctx: Context, cfgs: list[Any], scans: list[Any]) -> list[Outcome]:
    """torchair_graph_config / ascend_scheduler_config are silently ignored from 0.12 on."""
    version = _va_version(ctx, scans)
    if version is not None and version < (0, 12):
        return []
    shown = ".".join(map(str, version)) if version else "unknown"
    out = []
    for cfg in cfgs:
        if not cfg.legacy_keys:
            continue
        item = cfg.item("additional_config")
        ev = [item_evidence(item, legacy_keys=list(cfg.legacy_keys))] if item else []
        out.append(
            warn(
                f"legacy additional_config keys {', '.join(cfg.legacy_keys)} in {cfg.source} are "
                f"silently ignored by vllm-ascend >= 0.12 (installed: {shown})",
                ev,
                "Remove torchair_graph_config / ascend_scheduler_config / enable_graph_mode; "
                "configure graph mode with --compilation-config cudagraph_mode.",
            )
        )
    return out


def _env(ctx: Context, scans: list[Any], eager: bool) -> list[Outcome]:
    """ASCEND_LAUNCH_BLOCKING=1 / TASK_QUEUE_ENABLE=2 break graph capture."""
    out = []
    for f in scans:
        for hit in f.env_conflicts[:2]:
            out.append(
                fail(
                    f"log: {hit.signal} ({hit.source}:{hit.lineno})", [hit_evidence(hit)], _ENV_FIX
                )
            )
    if eager:
        return out
    for name, value, src in serving_env(ctx):
        if (name, value.strip()) in (("ASCEND_LAUNCH_BLOCKING", "1"), ("TASK_QUEUE_ENABLE", "2")):
            out.append(
                fail(
                    f"{name}={value} ({src}) is incompatible with graph mode",
                    [Evidence("config", src, f"{name}={value}", {name: value})],
                    _ENV_FIX,
                )
            )
    return out


def _proof(cfgs: list[Any], scans: list[Any]) -> Outcome:
    """PASS only on a line that proves graphs run; asked for but unproven is a WARN."""
    from ascend_audit.facts.serving_log import proves_graph

    for f in reversed(scans):
        proof = [h for h in f.graph if proves_graph(h)]
        if proof:
            hit = f.last("graph_capture_finished") or proof[-1]
            mode = f.cudagraph_mode or "graph"
            return passed(
                f"graph mode in effect ({mode}): {hit.source}:{hit.lineno}", [hit_evidence(hit)]
            )
    ev = [item_evidence(i) for c in cfgs for i in [c.item("cudagraph_mode")] if i]
    asked = next((c.cudagraph_mode for c in cfgs if c.cudagraph_mode), None)
    for f in scans:
        weaker = [h.value for h in f.graph_fallbacks if h.value in _WEAKER]
        asked = asked or (str(weaker[-1]) if weaker else None)
        note = f.last("npu_compilation_mode") or f.last("torchair_enabled")
        if note is not None:
            ev.append(hit_evidence(note))
            asked = asked or ("torchair" if note.signal == "torchair_enabled" else note.value)
    started = [h for f in scans for h in f.graph]
    ev += [hit_evidence(h) for h in started[-1:]]
    return warn(
        f"graph mode {asked or ''} requested (no --enforce-eager) but not proven: no log line "
        "shows capture finished, replay, or torchair compiled".replace("  ", " "),
        ev,
        "Pass the serving log through start-up (it prints 'Graph capturing finished' or "
        "'Batchsize N is compiled successfully').",
    )


def _graph_signals(f: Any) -> bool:
    """A log that says anything about the engine or its graph mode."""
    return bool(
        f.engine
        or f.graph_mode != "unknown"
        or f.graph_failures
        or f.graph_fallbacks
        or f.env_conflicts
        or f.graph_notes
        or f.graph
    )


@check("FWK-GRAPH-001")
def graph_mode(ctx: Context) -> Outcome:
    unusable = cannot_judge(ctx)
    if unusable:
        return unusable
    logged = ctx.fact(SERVING_CONFIGS).logged
    cfgs = [c for c in [*configs(ctx), *logged] if c.engine == "vllm"]
    scans = [f for f in logs(ctx) if f.engine != "mindie"]
    if not cfgs and not any(_graph_signals(f) for f in scans):
        if engine_of(ctx) == "mindie":
            return skip("MindIE serves this node: graph mode is a vLLM / vllm-ascend setting")
        return skip("no vLLM command line, config or log tells the graph mode")
    eager = _eager(ctx, cfgs, scans)
    is_eager = bool(eager)
    findings = [
        *_fallbacks(cfgs, scans),
        *_silent(scans),
        *eager,
        *_failures(scans),
        *_pruned(scans),
        *_legacy(ctx, cfgs, scans),
        *_env(ctx, scans, is_eager),
    ]
    if not is_eager:
        findings.append(_proof(cfgs, scans))
    ok = next((o.summary for o in findings if o.status.value == "PASS"), "graph mode")
    return unless_dead(ctx, worst(findings, ok))
