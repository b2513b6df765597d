"""FWK-LIFE-001: the serving engine started, stayed up and served; a dead engine is NOT_READY."""

from __future__ import annotations

from typing import Any

from ascend_audit.context import Context
from ascend_audit.model import Outcome, fail, passed, skip, warn, worst
from ascend_audit.registry import check

from .inputs import cannot_judge, code_evidence, hit_evidence, logs

_UNJUDGED = {"sglang": "SGLang", "lmdeploy": "LMDeploy", "tgi": "Text Generation Inference"}
_MARKERS = {
    "engine_core_failed": "the engine core failed to start",
    "worker_failed": "a worker process failed",
    "engine_core_died": "the engine core process died",
    "worker_died": "a worker process died",
    "unfinished_traceback": "the log ends inside a Python traceback (its exception is cut off)",
    "engine_dead": "the engine core hit a fatal error and serves no more (EngineDeadError)",
    "mindie_start_failed": "the MindIE server failed to start",
    "mindie_warmup_failed": "MindIE warm-up failed",
    "mindie_daemon_killed": "the MindIE daemon was killed",
    "mindie_job_failed": "the MindIE service job exited",
    "npu_oom": "NPU out of memory",
    "device_open_failed": "an NPU could not be opened",
    "visible_devices_refused": "the runtime refused the visible-device mask",
    "dev_shm_too_small": "/dev/shm is too small for the Ray object store",
    "crashed": "the process crashed",
    "torch_npu_error": "torch_npu reported a fatal error",
    "models_404": "the server answers 404 on /v1/models over and over (no model loaded)",
    "final_exception": "the process raised an exception",
    "cpp_abort": "an uncaught C++ exception aborted the process (terminate called)",
    "hccl_port_busy": "HCCL could not listen on its NIC port",
    "hccl_link_timeout": "HCCL links between ranks were not established in time",
    "c10d_rendezvous_timeout": "the torch.distributed (c10d) rendezvous timed out",
}
_HCCL_FIX = (
    "HCCL could not initialise. Likely causes: a leftover process still holds the NPUs or their "
    "HCCL port (npu-smi info; stop it), two jobs on one host sharing HCCL_IF_BASE_PORT, an NPU "
    "RoCE port down (hccn_tool -i N -link -g), or a rank table that does not match the started "
    "ranks."
)


def _codes(f: Any) -> list[Any]:
    """Catalog entries of the codes in a log, most specific layer first."""
    from ascend_audit.facts.error_codes import describe

    out = []
    for h in f.error_codes:
        kind, _, code = str(h.value).partition(":")
        info = describe(code, kind)
        if info is not None:
            out.append((h, info))
    return out


def _is_hccl(info: Any) -> bool:
    return info.kind == "hccl" or info.code.startswith(("EI", "EJ", "ERR02"))


def _death_class(f: Any) -> tuple[Any, Any] | None:
    """The first death line of a known class (multi-node start-up: HCCL port, HCCL link
    timeout, c10d rendezvous) and its class from data/serving_line_classes.toml."""
    from ascend_audit.facts.serving_line_classes import death_class

    for h in f.deaths:
        dc = death_class(h.signal, h.text)
        if dc is not None:
            return h, dc
    return None


def _stage_text(f: Any) -> str:
    return f"after {f.stage.replace('_', ' ')}" if f.stage else "before it got going"


def _death(f: Any) -> Outcome:
    death = f.death
    what = _MARKERS.get(death.signal, death.signal.replace("_", " "))
    exc = f.final_exception
    where = f" at {f.exception_where}" if f.exception_where else ""
    head = f"{f.source}: the engine died {_stage_text(f)}"
    if f.serving_lines:  # a death while serving: what it served before does not make it healthy
        head = f"{f.source}: the engine died after serving {f.serving_lines:,} request(s)"
    if f.shut_down:
        head += " (the shutdown logged after the death is its teardown, not a clean stop)"
    parts = [f"{exc}{where}" if exc else f"{what} ({death.source}:{death.lineno})"]
    cause = f.first_cause
    if cause is not None:
        # Name the line that says why first; the final line stays as context.
        at = f" at {f.first_cause_where}" if f.first_cause_where else ""
        parts = [
            f"first cause: {cause.value}{at} ({cause.source}:{cause.lineno})",
            f"final: {f'{exc}{where}' if exc else what} ({death.source}:{death.lineno})",
        ]
    if exc and death.signal == "final_exception":
        marker = next((h for h in f.deaths if h.signal != "final_exception"), None)
        if marker is not None and marker.signal in _MARKERS:
            parts.append(_MARKERS[marker.signal])
    first = f.hits("final_exception")
    if cause is None and len(first) > 1 and first[0].value != exc:
        parts.append(f"first exception: {first[0].value} ({first[0].source}:{first[0].lineno})")
    capture = f.last("graph_capturing") or f.last("capture_frame")
    if capture and f.stage in ("kv_sized", "weights_loaded") and capture.lineno < death.lineno:
        parts.append("while capturing graphs")
    codes = _codes(f)
    if cause is not None:  # the first cause's own codes first: its remediation is the fix
        codes.sort(key=lambda c: c[0].lineno != cause.lineno)
    if codes:
        parts.append(
            "codes " + ", ".join(f"{info.code} ({info.meaning})" for _h, info in codes[:4])
        )
    ev = [hit_evidence(cause)] if cause is not None else []
    ev.append(hit_evidence(death))
    reached = f.last(f"stage_{f.stage}") if f.stage else None
    if reached is not None:
        ev.append(hit_evidence(reached))  # how far it got
    shown = {death.lineno, cause.lineno if cause is not None else 0}
    ev += [hit_evidence(h) for h in f.deaths if h.lineno not in shown][:3]
    ev += [code_evidence(h, info) for h, info in codes[:6]]
    hccl = next((i for _h, i in codes if _is_hccl(i)), None)
    fix = None
    if hccl is not None:
        # The code's own causes in the summary; its own fix first, then the HCCL checklist.
        parts.append(f"likely causes of {hccl.code}: " + "; ".join(hccl.causes[:3]))
        fix = _HCCL_FIX if hccl.family else f"{hccl.remediation} {_HCCL_FIX}"
    if fix is None:
        fix = next((i.remediation for _h, i in codes if i.layer != "framework"), None)
    if fix is None and codes:
        fix = codes[0][1].remediation
    klass = _death_class(f)
    if klass is not None:
        hit, dc = klass
        parts.insert(1, f"{dc.label} ({hit.source}:{hit.lineno}); likely cause: {dc.cause}")
        fix = "Check, in order: " + "; ".join(dc.checklist) + (f" {fix}" if fix else "")
    if f.failed_operators:
        parts.append(f"operators named: {', '.join(f.failed_operators[:4])}")
    return fail(
        f"{head}: " + "; ".join(parts),
        ev,
        fix,
        stage=f.stage,
        died=True,
        final_exception=exc,
        exception_where=f.exception_where,
        first_cause=cause.value if cause is not None else None,
        first_cause_at=f"{cause.source}:{cause.lineno}" if cause is not None else None,
        error_codes=[str(h.value) for h in f.error_codes],
    )


def _judge(f: Any) -> Outcome:
    unjudged = _UNJUDGED.get(f.engine_kind or "")
    if f.died:
        out = _death(f)
        if unjudged:
            out.summary += f" ({unjudged} log: its configuration is not judged by ascend-audit yet)"
        return out
    if unjudged:
        return skip(
            f"{f.source}: a {unjudged} serving log; ascend-audit does not judge {unjudged} yet "
            f"(stage reached: {f.stage or 'none'})"
        )
    if f.collect_env and not f.stage:
        tool = f.last("tool_traceback")
        failed = (
            f"; its traceback ({tool.value}, {tool.source}:{tool.lineno}) is collect_env.py "
            "failing, not the engine"
            if tool is not None
            else ""
        )
        return skip(
            f"{f.source}: a collect_env.py output, which says nothing of the engine's lifecycle"
            f"{failed} (versions only; see FWK-STACK-001)"
        )
    reached = f.last(f"stage_{f.stage}") if f.stage else None
    if reached is None:
        return warn(
            f"{f.source}: no start-up line (launch, engine config, weights, server up): the log "
            "does not show the engine starting",
            [],
            "Pass the log from the start of the service (vllm serve output, MindIE daemon log).",
        )
    ev = [hit_evidence(reached)]
    if f.stage in ("server_up", "serving"):
        served = f" and served {f.serving_lines:,} request(s)" if f.serving_lines else ""
        return passed(
            f"{f.source}: the engine started and reached {f.stage.replace('_', ' ')}{served} "
            f"({reached.source}:{reached.lineno})",
            ev,
            stage=f.stage,
        )
    if f.shut_down:
        return warn(
            f"{f.source}: the engine was shut down {_stage_text(f)}, before serving",
            ev,
            stage=f.stage,
        )
    return warn(
        f"{f.source}: the log stops {_stage_text(f)} ({reached.source}:{reached.lineno}); it "
        "never shows the server up (Application startup complete / Daemon start success)",
        ev,
        "Pass the whole log, from start-up until the server answers requests.",
        stage=f.stage,
    )


@check("FWK-LIFE-001")
def serving_lifecycle(ctx: Context) -> Outcome:
    unusable = cannot_judge(ctx)
    if unusable:
        return unusable
    scans = logs(ctx)
    if not scans:
        return skip("no serving log (--serving-log): the engine's lifecycle is read from its log")
    findings = [_judge(f) for f in scans]
    judged = [o for o in findings if o.status.value != "SKIP"]
    if not judged:
        return findings[0] if len(findings) == 1 else skip("; ".join(o.summary for o in findings))
    ok = "; ".join(o.summary for o in judged if o.status.value == "PASS")
    return worst(judged, ok)
