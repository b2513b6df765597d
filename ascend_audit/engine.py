"""The engine: runs layers in order, gates, isolates crashes, applies waivers, times everything."""

from __future__ import annotations

import contextlib
import copy
import datetime as dt
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any, TypeVar

from ascend_audit import __version__
from ascend_audit.context import Context
from ascend_audit.facts.keys import FactKey
from ascend_audit.model import (
    GATING,
    LAYERS,
    Evidence,
    LayerReport,
    Outcome,
    Progress,
    Report,
    Result,
    Status,
    Verdict,
)
from ascend_audit.redact import MASK, is_secret_name, redact_text
from ascend_audit.registry import CheckSpec, Registry

T = TypeVar("T")


@dataclass
class Selection:
    """Which checks and layers a run judges."""

    only: frozenset[str] = frozenset()
    skip: frozenset[str] = frozenset()
    layers: tuple[str, ...] = LAYERS
    gate: bool = True
    # Run blocked checks anyway, only to gather their facts (collect records every layer's
    # questions), while still reporting them BLOCKED.
    gather_blocked: bool = False

    def wants(self, spec: CheckSpec) -> bool:
        if self.only and spec.id not in self.only:
            return False
        return spec.id not in self.skip


def _now() -> str:
    return dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds")


def _scrub(value: Any) -> Any:
    """Redact secrets from evidence values of any shape."""
    if isinstance(value, str):
        return redact_text(value)
    if isinstance(value, dict):
        return {
            k: MASK if isinstance(v, str) and v and is_secret_name(str(k)) else _scrub(v)
            for k, v in value.items()
        }
    if isinstance(value, (list, tuple)):
        return [_scrub(v) for v in value]
    return value


BUILTIN_ORIGIN = "ascend_audit.checks."


def is_plugin(spec: CheckSpec) -> bool:
    """A check from --checks-dir or an entry point: trusted code, but isolated like a guest."""
    return not spec.origin.startswith(BUILTIN_ORIGIN)


class FactCopies:
    """A plug-in's view of the context: every fact it gets is its own deep copy, so whatever it
    does to one cannot change what the checks after it see."""

    def __init__(self, ctx: Context) -> None:
        self._ctx = ctx

    def fact(self, key: FactKey[T]) -> T:
        value = self._ctx.fact(key)
        try:
            return copy.deepcopy(value)
        except Exception:
            return value  # not copyable (a lock, a handle): frozen dataclasses still protect it

    def __getattr__(self, name: str) -> Any:
        return getattr(self._ctx, name)


def _crash(spec: CheckSpec, exc: BaseException) -> Outcome:
    """ERROR with the traceback of EXC as evidence; called while EXC is being handled."""
    import traceback  # only a crash needs it

    tb = traceback.format_exc(limit=12)
    how = "exited" if isinstance(exc, SystemExit) else "crashed"
    return Outcome(
        Status.ERROR,
        f"check {how}: {type(exc).__name__}: {exc}",
        [Evidence("probe", f"{spec.origin}:{getattr(spec.func, '__name__', '?')}", tb)],
    )


def _judge(spec: CheckSpec, ctx: Any) -> Outcome:
    outcome = spec.func(ctx)
    if not isinstance(outcome, Outcome):
        outcome = Outcome(Status.ERROR, f"check returned {type(outcome).__name__}, not an Outcome")
    return outcome


def _run_plugin(spec: CheckSpec, ctx: Context) -> Outcome:
    """Run a plug-in check in a thread with a deadline: sys.exit, any BaseException or running
    past audit.check_timeout becomes ERROR, and the audit goes on."""
    limit = float(ctx.policy.get("audit.check_timeout") or 30.0)
    box: list[Outcome] = []

    def work() -> None:
        try:
            box.append(_judge(spec, FactCopies(ctx)))
        except BaseException as exc:
            box.append(_crash(spec, exc))

    worker = threading.Thread(target=work, name=f"check-{spec.id}", daemon=True)
    worker.start()
    worker.join(limit)
    if worker.is_alive() or not box:
        return Outcome(
            Status.ERROR,
            f"check ran past its timeout of {limit:g} s (policy audit.check_timeout); "
            "its result is ignored",
            [Evidence("probe", f"{spec.origin}:{getattr(spec.func, '__name__', '?')}", "")],
        )
    return box[0]


def run_check(spec: CheckSpec, ctx: Context) -> Result:
    """Run one check; a crash becomes ERROR with its traceback as evidence."""
    start = time.perf_counter()
    if is_plugin(spec):
        outcome = _run_plugin(spec, ctx)
    else:
        try:
            outcome = _judge(spec, ctx)
        except Exception as exc:
            outcome = _crash(spec, exc)
    elapsed = (time.perf_counter() - start) * 1000
    return Result(
        id=spec.id,
        layer=spec.layer,
        status=outcome.status,
        severity=spec.severity,
        title=spec.title,
        summary=redact_text(outcome.summary),
        # A fix is advice for what went wrong; a PASS or SKIP has none (`explain` still shows it).
        remediation=""
        if outcome.status in (Status.PASS, Status.SKIP)
        else outcome.remediation or spec.remediation,
        evidence=[
            Evidence(e.kind, redact_text(e.source), redact_text(e.excerpt), _scrub(e.values))
            for e in outcome.evidence
        ],
        metrics=_scrub(outcome.metrics),
        duration_ms=elapsed,
    )


def apply_waiver(result: Result, ctx: Context, today: dt.date) -> Result:
    """Turn a FAIL/ERROR into WAIVED under a current waiver; say so when the waiver expired."""
    waiver = ctx.policy.waiver_for(result.id)
    if waiver is None or result.status not in GATING:
        return result
    if waiver.active(today):
        result.waiver = {**waiver.to_dict(), "active": True, "was": result.status.value}
        result.summary = f"{result.summary} (waived until {waiver.expires}: {waiver.reason})"
        result.status = Status.WAIVED
    else:
        result.waiver = {**waiver.to_dict(), "active": False}
        result.summary = f"{result.summary} (waiver expired on {waiver.expires}; no longer waived)"
    return result


def require(result: Result, required: frozenset[str], why: str = "") -> Result:
    """A required check (in audit.required_checks, or a core check of a judged layer) that SKIPs
    fails, naming why it is required and why it could not run."""
    if result.id not in required or result.status is not Status.SKIP:
        return result
    because = f" ({why})" if why else ""
    result.summary = f"required check {result.id} could not run{because}: {result.summary}"
    result.status = Status.FAIL
    if not result.remediation:
        result.remediation = (
            f"Give {result.id} the input it names (`ascend-audit explain {result.id}` lists its "
            "evidence) and audit again, or waive it in the policy with a reason and an expiry."
        )
    return result


def layer_verdict(results: Iterable[Result]) -> Verdict:
    statuses = [r.status for r in results]
    judged = [s for s in statuses if s not in (Status.SKIP, Status.BLOCKED)]
    if Status.BLOCKED in statuses and not judged:
        return Verdict.BLOCKED
    if not judged:
        return Verdict.MISSING
    if any(s in GATING for s in judged):
        return Verdict.NOT_READY
    if Status.WARN in judged:
        return Verdict.DEGRADED
    return Verdict.READY


def overall_verdict(layers: list[LayerReport]) -> Verdict:
    required = [layer.verdict for layer in layers if layer.required]
    for v in (Verdict.NOT_READY, Verdict.BLOCKED, Verdict.MISSING, Verdict.DEGRADED):
        if v in required:
            return v
    return Verdict.READY


def _host_identity(ctx: Context) -> dict[str, Any]:
    """The host's identity plus the auditing context (container or host), when it can be told."""
    from ascend_audit.facts.container import CONTAINER

    identity = dict(ctx.host.identity())
    with contextlib.suppress(Exception):  # a missing marker must never cost the host section
        identity.update(ctx.fact(CONTAINER).to_identity())
    return identity


def run_audit(
    registry: Registry,
    ctx: Context,
    selection: Selection | None = None,
    progress: Progress | None = None,
    today: dt.date | None = None,
    inventory: Callable[[Context], dict[str, Any]] | None = None,
) -> Report:
    """Judge the selected layers in order and return the Report."""
    sel = selection or Selection()
    prog = progress or Progress()
    day = today or dt.date.today()
    started, t0 = _now(), time.perf_counter()
    required = set(ctx.policy["audit.required_layers"]) & set(sel.layers)
    must_run = frozenset(ctx.policy.get("audit.required_checks", ()) or ())
    results: list[Result] = []
    layers: list[LayerReport] = []
    for layer in LAYERS:
        if layer not in sel.layers:
            layers.append(LayerReport(layer, Verdict.MISSING, False, [], "not selected (--layers)"))
            continue
        prog.layer_started(layer)
        blockers = [r.id for r in results if r.status in GATING]
        specs = [s for s in registry.for_layer(layer) if sel.wants(s)]
        layer_results: list[Result] = []
        if blockers and sel.gate:
            if sel.gather_blocked:
                known = set(ctx.known_facts())
                ctx.prefetch(layer)
                for spec in specs:
                    run_check(spec, ctx)
                ctx.forget(set(ctx.known_facts()) - known)  # the report must not show them
            for spec in specs:
                res = Result(
                    spec.id,
                    layer,
                    Status.BLOCKED,
                    spec.severity,
                    spec.title,
                    f"not judged: a lower layer is not ready ({', '.join(blockers)})",
                    "",
                    blocked_by=list(blockers),
                )
                layer_results.append(res)
                prog.result(res)
        else:
            ctx.prefetch(layer)
            unproven: list[Result] = []  # core checks that skipped: settled once the layer is run
            for spec in specs:
                res = require(run_check(spec, ctx), must_run)
                res.on_broken_layer = bool(blockers)
                if blockers:
                    res.blocked_by = list(blockers)
                layer_results.append(res)
                if spec.core and res.status is Status.SKIP:
                    unproven.append(res)
                    continue
                prog.result(apply_waiver(res, ctx, day))
            # A layer with nothing to judge stays MISSING; one judged on other evidence is not
            # READY while its core proof is absent.
            if any(r.status not in (Status.SKIP, Status.BLOCKED) for r in layer_results):
                core_ids = frozenset(r.id for r in unproven)
                why = f"the {layer} layer is READY only on its proof"
                unproven = [require(r, core_ids, why) for r in unproven]
            for res in unproven:
                prog.result(apply_waiver(res, ctx, day))
        verdict = Verdict.BLOCKED if blockers and sel.gate else layer_verdict(layer_results)
        reason = _layer_reason(verdict, layer_results, blockers, sel.gate)
        report_layer = LayerReport(layer, verdict, layer in required, list(blockers), reason)
        layers.append(report_layer)
        results.extend(layer_results)
        prog.layer_finished(report_layer)
    return Report(
        tool={"name": "ascend-audit", "version": __version__},
        host=_scrub(_host_identity(ctx)),
        started_at=started,
        finished_at=_now(),
        inputs={"host": ctx.host.kind, "sysroot": ctx.host.sysroot, **ctx.inputs.to_dict()},
        verdict=overall_verdict(layers),
        layers=layers,
        results=results,
        inventory=_scrub(inventory(ctx)) if inventory else {},
        policy=ctx.policy.to_dict(),
        duration_ms=(time.perf_counter() - t0) * 1000,
    )


def _layer_reason(verdict: Verdict, results: list[Result], blockers: list[str], gate: bool) -> str:
    if verdict is Verdict.BLOCKED:
        return f"blocked by {', '.join(blockers)}"
    bad = [r.id for r in results if r.status in GATING]
    if verdict is Verdict.NOT_READY:
        reason = f"failing: {', '.join(bad)}"
        unrun = [r.summary for r in results if r.summary.startswith(f"required check {r.id} ")]
        if unrun:
            reason += f" ({'; '.join(unrun)})"
    elif verdict is Verdict.DEGRADED:
        reason = f"warnings: {', '.join(r.id for r in results if r.status is Status.WARN)}"
    elif verdict is Verdict.MISSING:
        skipped = next((r.summary for r in results if r.status is Status.SKIP), "")
        reason = f"nothing to judge it on{': ' + skipped if skipped else ''}"
    else:
        reason = ""
    if blockers and not gate:
        reason = f"{reason}; judged on a broken layer ({', '.join(blockers)})".lstrip("; ")
    return reason


def exit_code(report: Report, fail_on: str = "fail") -> int:
    """0 ready, 1 not ready (or degraded with fail_on=warn)."""
    if report.verdict in (Verdict.NOT_READY, Verdict.BLOCKED, Verdict.MISSING):
        return 1
    if report.verdict is Verdict.DEGRADED and fail_on == "warn":
        return 1
    return 0
