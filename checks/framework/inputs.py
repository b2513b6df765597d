"""Judging helpers of the framework checks: is there evidence, evidence items, serving inputs."""

from __future__ import annotations

from typing import Any, TypeVar

from ascend_audit.context import Context
from ascend_audit.facts.framework_inputs import (
    BENCH_RESULTS,
    PROBE,
    SERVING_CONFIGS,
    SERVING_LOGS,
    ProbeRun,
)
from ascend_audit.facts.keys import FactKey
from ascend_audit.model import Evidence, Outcome, Status, error, skip

T = TypeVar("T")


def probe_problem(run: ProbeRun) -> str | None:
    """Why the probe gave nothing to judge (hung, not Python, not found), or None."""
    res, facts = run.result, run.facts
    if res is None:
        return None
    if res.status == "timeout":
        return (
            f"the probe of {run.python} did not finish within {run.timeout:g} s "
            "(the interpreter hung, or an import blocked)"
        )
    if res.status == "missing":
        return f"{run.python} cannot be executed (no such file)"
    if res.status == "refused":  # another user could replace it: root does not run it
        return f"{run.python} was not run: {res.error}"
    if res.status in ("error", "signal"):
        return f"the probe of {run.python} could not run: {res.describe()}"
    if res.rc in (126, 127) and not (facts and facts.ran):
        return f"{run.python} cannot be executed (exit {res.rc}: {res.stderr.strip()[:200]})"
    if facts is None or not facts.ran:
        why = "; ".join(facts.problems[:2]) if facts is not None else "no output"
        return f"{run.python} did not answer the probe like a Python interpreter: {why}"
    return None


def probe_evidence(run: ProbeRun) -> Evidence:
    """The probe's answer: versions, the torch_npu import outcome, and deep device facts."""
    res, f = run.result, run.facts
    values: dict[str, Any] = {"python": run.python, "origin": run.origin}
    if run.identity is not None:
        values["run_as"] = {"uid": run.identity.uid, "gid": run.identity.gid}
    if res is not None:
        values.update(status=res.status, rc=res.rc, duration_ms=round(res.duration_ms, 1))
        if res.notes:  # paths dropped from its environment, whom it ran as
            values["notes"] = list(res.notes)
    if f is None or not f.ran:
        text = ((res.stdout or "")[-1500:] + "\n" + (res.stderr or "")[-1500:]) if res else ""
        return Evidence("probe", run.source, text.strip(), values)
    lines = [f"python {f.python_version} ({f.executable})"]
    lines += [f"{k} {v}" for k, v in f.packages if v]
    lines.append(f"import torch_npu: {f.torch_npu_status}")
    if f.import_error:
        lines.append(f.import_error[:600])
    if f.deep:
        lines.append(f"devices: {f.device_count} {list(f.device_names)}")
        for i, mem in enumerate(f.mem_info):
            if mem:
                lines.append(f"npu {i}: {mem[0] / 2**30:.1f} GiB free of {mem[1] / 2**30:.1f} GiB")
    values.update(
        packages=dict(f.packages),
        torch_npu_status=f.torch_npu_status,
        missing_library=f.missing_library,
        torch_cuda=f.torch_cuda,
    )
    if f.deep:
        values.update(
            device_count=f.device_count,
            device_names=list(f.device_names),
            mem_info=[list(m) if m else None for m in f.mem_info],
            cann_version=f.cann_version,
            driver_version=f.driver_version,
        )
    return Evidence("probe", run.source, "\n".join(lines), values)


def no_evidence(ctx: Context) -> str | None:
    """The reason the framework layer has nothing to judge, or None when there is evidence."""
    if (
        ctx.inputs.python
        or ctx.inputs.serving_configs
        or ctx.inputs.serving_logs
        or ctx.inputs.bench_results
    ):
        return None
    if ctx.fact(SERVING_CONFIGS).processes:
        return None
    run = ctx.fact(PROBE)
    if run.python:
        return None
    missed = f" ({run.missed})" if run.missed else ""
    return (
        f"no framework evidence: no running vLLM / MindIE process{missed}, and no --python, "
        "--serving-config, --serving-log or --bench-result given"
    )


def where(source: str, lineno: int | None) -> str:
    """`path:lineno` (or just the path when the line is unknown)."""
    return f"{source}:{lineno}" if lineno else source


def item_evidence(item: Any, **values: Any) -> Evidence:
    """Evidence of one config item: `file:line` (or `process N cmdline:argv-index`)."""
    return Evidence(
        "config", where(item.source, item.lineno), item.text, {item.key: item.value, **values}
    )


def hit_evidence(hit: Any, **values: Any) -> Evidence:
    """Evidence of one log hit: `log:line` and the line text."""
    return Evidence(
        "log", where(hit.source, hit.lineno), hit.text, {hit.signal: hit.value, **values}
    )


def code_evidence(hit: Any, info: Any) -> Evidence:
    """Evidence of one error code: the log line, and what the catalog says about the code."""
    return Evidence(
        "log",
        where(hit.source, hit.lineno),
        hit.text,
        {
            "code": info.code,
            "kind": info.kind,
            "meaning": info.meaning,
            "layer": info.layer,
            "causes": list(info.causes),
            "catalog_source": info.source,
        },
    )


def dead_logs(ctx: Context) -> list[Any]:
    """Serving logs that end in death."""
    return [f for f in logs(ctx) if f.died]


def unless_dead(ctx: Context, out: Outcome) -> Outcome:
    """A PASS stands on a working engine: when a log shows the engine died, it is a WARN."""
    dead = dead_logs(ctx)
    if out.status is not Status.PASS or not dead:
        return out
    d = dead[0].death
    out.status = Status.WARN
    out.summary = (
        f"{out.summary}; but the engine died ({d.source}:{d.lineno}), so this proves nothing "
        "about a working service (see FWK-LIFE-001)"
    )
    return out


def input_errors(ctx: Context, *kinds: str) -> list[Evidence]:
    """Evidence for each unreadable input of the given kinds (configs, logs, bench)."""
    out: list[Evidence] = []
    if "configs" in kinds:
        out += [Evidence("config", i.path, i.error or "") for i in ctx.fact(SERVING_CONFIGS).errors]
    if "logs" in kinds:
        out += [Evidence("log", i.path, i.error or "") for i in ctx.fact(SERVING_LOGS) if i.error]
    if "bench" in kinds:
        out += [Evidence("file", i.path, i.error or "") for i in ctx.fact(BENCH_RESULTS) if i.error]
    return out


def cannot_judge(ctx: Context) -> Outcome | None:
    """SKIP when the layer has no evidence, ERROR when a serving config or log is unreadable."""
    reason = no_evidence(ctx)
    if reason:
        return skip(reason)
    bad = input_errors(ctx, "configs", "logs")
    if bad:
        return error(f"serving input unreadable: {bad[0].excerpt}", bad)
    return None


def logs(ctx: Context) -> list[Any]:
    """ServingLogFacts of every readable log."""
    return [i.facts for i in ctx.fact(SERVING_LOGS) if i.facts is not None and not i.error]


def configs(ctx: Context) -> list[Any]:
    """Every readable ServingConfig (files and processes)."""
    return ctx.fact(SERVING_CONFIGS).configs


def optional_fact(ctx: Context, key: FactKey[T]) -> T | None:
    """A driver-layer fact when this run can gather it, else None (framework-only, snapshots)."""
    try:
        return ctx.fact(key)
    except Exception:
        return None


def engine_of(ctx: Context) -> str | None:
    """'vllm' or 'mindie' from configs, logs and the probe's packages."""
    for cfg in configs(ctx):
        if cfg.engine:
            return cfg.engine
    for f in logs(ctx):
        if f.engine:
            return "mindie" if f.engine == "mindie" else "vllm"
    run = ctx.fact(PROBE)
    if run.facts is not None and run.facts.ran:
        if run.facts.package("vllm"):
            return "vllm"
        if run.facts.package("mindie") or run.facts.package("mindie_llm"):
            return "mindie"
    return None


def serving_env(ctx: Context) -> list[tuple[str, str, str]]:
    """(name, value, where) for serving env vars from processes and configs."""
    out: list[tuple[str, str, str]] = []
    for inp in ctx.fact(SERVING_CONFIGS).inputs:
        cfg = inp.config
        if cfg is None:
            continue
        src = f"process {inp.pid} environ" if inp.pid else f"{inp.path} environ"
        out += [(k, v, src) for k, v in cfg.env.items()]
    return list(dict.fromkeys(out))


def graph_summary(ctx: Context) -> str:
    """'graph', 'eager', 'mixed' or 'unknown': the logs' verdict, else the configs' request."""
    modes = [f.graph_mode for f in logs(ctx) if f.graph_mode != "unknown"]
    if modes:
        return modes[-1]
    for cfg in configs(ctx):
        if cfg.engine != "vllm":
            continue
        if cfg.enforce_eager or cfg.cudagraph_mode == "NONE":
            return "eager"
        return "graph"
    return "unknown"
