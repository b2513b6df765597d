"""Host CPU fallback: operators torch_npu runs on the host, and operators compiled at run time."""

from __future__ import annotations

from ascend_audit.context import Context
from ascend_audit.facts.fallback_log import FallbackHit
from ascend_audit.facts.framework_inputs import SERVING_LOGS
from ascend_audit.facts.operator_inputs import FALLBACK_LOGS, PROFILER, OperatorTraces, ServingLogs
from ascend_audit.model import Evidence, Outcome, error, fail, skip, warn, worst
from ascend_audit.registry import check

from .traces import NO_TRACE


@check("OPR-FALLBACK-001")
def host_fallback(ctx: Context) -> Outcome:
    logs: ServingLogs = ctx.fact(FALLBACK_LOGS)
    traces: OperatorTraces = ctx.fact(PROFILER)
    if not logs.given and not traces.timelines:
        if not traces.given:
            return skip(NO_TRACE)
        return skip(
            "no serving log (--serving-log) and no timeline (trace_view.json / msprof_*.json) "
            "in the trace: nothing shows fallbacks"
        )
    findings = [
        *_log_findings(logs, ctx.policy["operator.host_fallback_fail"]),
        *_timeline_findings(traces),
    ]
    if not findings and not traces.timelines:
        unproven = _no_model_ran(ctx)
        if unproven:
            return skip(f"{unproven}: the absence of fallback warnings proves nothing")
    out = worst(findings, _ok_summary(logs, traces))
    deaths = [i.facts.death for i in ctx.fact(SERVING_LOGS) if i.facts is not None]
    d = next((x for x in deaths if x is not None), None)
    if out.status.value == "PASS" and d is not None and not traces.timelines:
        return warn(
            f"{out.summary}; but the engine died ({d.source}:{d.lineno}): a log cut short by a "
            "death proves no steady serving without fallbacks (see FWK-LIFE-001)",
            out.evidence,
        )
    return out


# Stages by which the engine has run the model (the KV-cache profile run is a forward pass).
_RAN = ("kv_sized", "graphs_captured", "server_up", "serving")


def _no_model_ran(ctx: Context) -> str | None:
    """Why no serving log shows an operator running, or None when one does."""
    scans = [i.facts for i in ctx.fact(SERVING_LOGS) if i.facts is not None]
    if not scans:
        return None
    if all(f.died and f.stage != "serving" for f in scans):
        return "the engine died before it served (see FWK-LIFE-001): no operator ran"
    if not any(f.stage in _RAN for f in scans):
        stages = ", ".join(sorted({f.stage or "none" for f in scans}))
        return f"no serving log shows the model running (stage reached: {stages})"
    return None


def _hits(logs: ServingLogs, kinds: tuple[str, ...]) -> dict[str, list[tuple[str, FallbackHit]]]:
    """Operator -> (log, hit) across every log, for the given kinds of finding."""
    out: dict[str, list[tuple[str, FallbackHit]]] = {}
    for given, summary in logs.logs:
        for h in summary.hits if summary else ():
            if h.kind in kinds:
                out.setdefault(h.operator, []).append((given, h))
    return out


def _evidence(given: str, h: FallbackHit) -> Evidence:
    pairs = zip(h.first_lines, h.excerpts)
    lines = "\n".join(f"line {n}: {text}" for n, text in pairs)
    return Evidence(
        "log",
        given,
        lines,
        {
            "kind": h.kind,
            "operator": h.operator,
            "lines": h.lines,
            "distinct": h.distinct,
            "first_lines": list(h.first_lines),
        },
    )


def _describe(ops: dict[str, list[tuple[str, FallbackHit]]]) -> str:
    return ", ".join(f"{op} ({sum(h.lines for _, h in v)} line(s))" for op, v in ops.items())


def _log_findings(logs: ServingLogs, fail_at: int) -> list[Outcome]:
    out = [
        error(f"serving log {given} not found or not a readable file")
        for given, summary in logs.logs
        if summary is None
    ]
    cpu = _hits(logs, ("cpu_fallback",))
    if cpu:
        ev = [_evidence(g, h) for v in cpu.values() for g, h in v]
        summary = f"{len(cpu)} operator(s) fall back to the host CPU: {_describe(cpu)}"
        rem: str | None = (
            f"Each call of {', '.join(cpu)} copies its tensors NPU → host → NPU and runs on the "
            "CPU. Replace the operator with one torch_npu supports (see its supported-operator "
            "list), upgrade torch_npu / CANN to a release that has it, or move the call out of "
            "the serving path."
        )
        judge = fail if fail_at and len(cpu) >= fail_at else warn
        out.append(judge(summary, ev, rem, host_fallback_ops=list(cpu)))
    slow = _hits(logs, ("ai_cpu", "dtype_cast"))
    if slow:
        ev = [_evidence(g, h) for v in slow.values() for g, h in v]
        rem = None
        if any("->" in op for op in slow):
            rem = (
                "The device has no kernel for that dtype and casts it on every call (double → "
                "float): create the tensors as float32 / int32 before they reach the NPU."
            )
        out.append(
            warn(
                f"AI CPU / forced dtype-cast warnings: {_describe(slow)}",
                ev,
                rem,
                slow_path_warnings=list(slow),
            )
        )
    return out


def _timeline_findings(t: OperatorTraces) -> list[Outcome]:
    counts = {rank: tv.aclop_compile_execute for rank, tv in t.timelines}
    total = sum(counts.values())
    if not total:
        return []
    ev = [
        Evidence(
            "trace",
            tv.source,
            f"{tv.aclop_compile_execute} aclopCompileAndExecute event(s)",
            {"rank": rank, "aclop_compile_execute": tv.aclop_compile_execute},
        )
        for rank, tv in t.timelines
        if tv.aclop_compile_execute
    ]
    return [
        warn(
            f"{total} aclopCompileAndExecute call(s) in the timeline: operators compiled at "
            "run time (" + ", ".join(f"{r}: {n}" for r, n in counts.items() if n) + ")",
            ev,
            "Operators compiled while serving stall the stream for milliseconds each. Use "
            "binary (pre-compiled) kernels with torch_npu.npu.set_compile_mode(jit_compile=False), "
            "pad inputs to fixed bucket shapes, and warm up every bucket before going live.",
            aclop_compile_execute=total,
        )
    ]


def _ok_summary(logs: ServingLogs, t: OperatorTraces) -> str:
    parts = []
    if logs.given:
        scanned = sum(s.lines_scanned for _, s in logs.logs if s)
        parts.append(f"no fallback warning in {scanned} line(s) of {len(logs.logs)} serving log(s)")
    if t.timelines:
        parts.append(f"no run-time operator compilation in {len(t.timelines)} rank timeline(s)")
    return "; ".join(parts)
