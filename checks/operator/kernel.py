"""OPR-KERNEL-001: no operator kernel failed on the device (AI Core / AI CPU / aclnn errors), and
no death names an operator without a kernel for the backend, the dtype or graph compile."""

from __future__ import annotations

import re
from typing import Any

from ascend_audit.context import Context
from ascend_audit.facts.framework_inputs import SERVING_LOGS
from ascend_audit.model import Evidence, Outcome, error, fail, passed, skip, worst
from ascend_audit.registry import check

NO_LOG = "no serving log (--serving-log): operator errors are read from it"
_OP_CALL_RE = re.compile(r"call aclnn\w+ failed|\bop\[\w+\]")
_RAN = ("kv_sized", "graphs_captured", "server_up", "serving")  # profiling runs the model


def _where(source: str, lineno: int | None) -> str:
    return f"{source}:{lineno}" if lineno else source


def code_evidence(hit: Any, info: Any) -> Evidence:
    """The log line of an error code, with what the catalog says about it."""
    return Evidence(
        "log",
        _where(hit.source, hit.lineno),
        hit.text,
        {"code": info.code, "meaning": info.meaning, "layer": info.layer, "source": info.source},
    )


def hit_evidence(hit: Any) -> Evidence:
    return Evidence("log", _where(hit.source, hit.lineno), hit.text, {hit.signal: hit.value})


def _operator_codes(f: Any) -> list[tuple[Any, Any]]:
    from ascend_audit.facts.error_codes import describe

    out = []
    for h in f.error_codes:
        kind, _, code = str(h.value).partition(":")
        info = describe(code, kind)
        if info is None:
            continue
        # A code the catalog only knows by family still indicts the operator whose call it ends.
        if info.layer == "operator" or (info.family and _OP_CALL_RE.search(h.text or "")):
            out.append((h, info))
    return out


def _judge(f: Any) -> Outcome:
    codes = _operator_codes(f)
    if codes:
        ops = ", ".join(f.failed_operators[:4]) or "not named in the log (see the device plog)"
        names = ", ".join(f"{i.code} ({i.meaning})" for _h, i in codes[:4])
        ev: list[Evidence] = [code_evidence(h, i) for h, i in codes[:6]]
        if f.death is not None:
            ev.append(hit_evidence(f.death))
        return fail(
            f"{f.source}: an operator failed on the device: {names}; operator: {ops}",
            ev,
            codes[0][1].remediation,
            operator_codes=[i.code for _h, i in codes],
            failed_operators=list(f.failed_operators),
        )
    failure = f.operator_failure
    if failure is not None:
        from ascend_audit.facts.serving_log.operator_failures import LABELS

        ops = ", ".join(f.failed_operators[:4]) or "not named in the log"
        ev = [hit_evidence(failure)]
        if f.death is not None and f.death.lineno != failure.lineno:
            ev.append(hit_evidence(f.death))
        return fail(
            f"{f.source}: the engine died of an operator failure with no error code: "
            f"{LABELS.get(str(failure.value), failure.value)}; operator: {ops}",
            ev,
            operator_failure=failure.value,
            failed_operators=list(f.failed_operators),
        )
    ran = f.stage in _RAN
    if f.died and ran:
        return skip(
            f"{f.source}: the engine died (see FWK-LIFE-001) of a fault no operator code "
            "indicts; a dead engine proves nothing about its operators"
        )
    if f.died and not ran:
        return skip(
            f"{f.source}: the engine died before any operator ran "
            f"(stage: {f.stage or 'start-up'}); nothing here judges the operators"
        )
    if not ran:
        return skip(
            f"{f.source}: the log does not reach the point where operators run (stage: "
            f"{f.stage or 'none'}); nothing here judges the operators"
        )
    return passed(
        f"{f.source}: operators ran ({f.stage.replace('_', ' ')}) with no operator-level error "
        f"code in {f.lines_read:,} lines"
    )


@check("OPR-KERNEL-001")
def operator_kernel_errors(ctx: Context) -> Outcome:
    items = ctx.fact(SERVING_LOGS)
    if not items:
        return skip(NO_LOG)
    bad = [i for i in items if i.error]
    if bad:
        return error(
            f"serving log unreadable: {bad[0].error}",
            [Evidence("log", i.path, i.error or "") for i in bad],
        )
    findings = [_judge(i.facts) for i in items]
    judged = [o for o in findings if o.status.value != "SKIP"]
    if not judged:
        return findings[0] if len(findings) == 1 else skip("; ".join(o.summary for o in findings))
    return worst(judged, "; ".join(o.summary for o in judged))
