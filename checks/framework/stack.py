"""FWK-STACK-001: torch, torch_npu, vLLM / vllm-ascend, MindIE, CANN and the driver fit together."""

from __future__ import annotations

from typing import Any

from ascend_audit.context import Context
from ascend_audit.facts.framework_inputs import PROBE
from ascend_audit.facts.version_files import VERSION_FILES
from ascend_audit.model import Evidence, Outcome, error, fail, passed, skip, warn, worst
from ascend_audit.registry import check

from .inputs import (
    hit_evidence,
    logs,
    no_evidence,
    optional_fact,
    probe_evidence,
    probe_problem,
    unless_dead,
)

_TABLE_CSV = {
    "torch_npu": "compat_torch_npu.csv",
    "vllm_ascend_release": "compat_vllm_ascend_release.csv",
    "vllm_ascend_tag_pins": "compat_vllm_ascend_tag_pins.csv",
    "cann_hdk": "compat_cann_hdk.csv",
    "mindie": "compat_mindie.csv",
}
_IMPORT_FAIL = {
    "cann_missing": "torch_npu cannot load: CANN not installed or not sourced ({lib} missing)",
    "torch_mismatch": "torch_npu cannot load: it was built for another torch (undefined symbol)",
    "cuda_torch": "torch_npu cannot load: torch is a CUDA build (two accelerators)",
    "not_installed": "torch_npu is not installed in {python}",
    "other": "torch_npu cannot load: {error}",
    "unknown": "the probe did not report whether torch_npu imports",
}
_IMPORT_FIX = {
    "cann_missing": "Install the CANN toolkit (and NNAL) matching torch_npu and run "
    "`source /usr/local/Ascend/ascend-toolkit/set_env.sh` in the service's environment.",
    "torch_mismatch": "Install the torch_npu build for this torch (same base version), "
    "or pin torch to torch_npu's base version.",
    "cuda_torch": "Reinstall torch as the CPU build (`pip install torch==X+cpu`); torch_npu "
    "brings the NPU backend.",
    "not_installed": "Install torch_npu matching torch and CANN in the serving environment.",
}
_LOG_STACK = {
    "cann_lib_missing": "log: a CANN library is missing ({value})",
    "backend_extension_failed": "log: torch could not load its backend extension {value}",
    "undefined_symbol": "log: undefined symbol (torch / torch_npu / CANN built for each other?)",
    "two_accelerators": "log: CUDA torch beside torch_npu ({value})",
    "device_type_mismatch": "log: vllm-ascend built for another device type ({value})",
    "soc_version_mismatch": "log: operator package built for another SoC ({value})",
    "driver_too_old": "log: the driver is too old for this CANN",
    "version_too_low": "log: the {value} version is too low",
    "device_type_unknown": "log: vllm-ascend failed to infer the device type",
    "cann_env_not_sourced": "log: CANN environment not sourced (set_env.sh)",
    "invalid_version": "log: vLLM version unreadable (InvalidVersion; set VLLM_VERSION)",
    "custom_ops_disabled": "log: vllm-ascend's custom operators cannot load ({value})",
    "dev_shm_too_small": "log: /dev/shm is too small for Ray's object store",
}
_LOG_FIX = {
    "custom_ops_disabled": "vllm_ascend_C was built against a newer glibc / libstdc++ than this "
    "image has: use the vllm-ascend image or wheel built for this OS (e.g. the openEuler image), "
    "or build vllm-ascend from source here. (`Failed to import from vllm._C` is harmless on "
    "Ascend; this one is not.)",
    "dev_shm_too_small": "Give the container a larger /dev/shm (docker run --shm-size, or an "
    "emptyDir of medium Memory in Kubernetes).",
}


def _compat(answer: Any) -> Outcome:
    """One compatibility answer: ok → pass, bad → FAIL, unknown → WARN, rows as evidence."""
    ev = [
        Evidence(
            "file",
            f"ascend_audit/data/{_TABLE_CSV.get(r.table, r.table)}:{r.lineno}",
            ", ".join(f"{k}={v}" for k, v in r.fields if v and k != "source")[:400],
            {"table_version": answer.table_version, "source": r.source},
        )
        for r in answer.rows[:4]
    ] or [
        Evidence(
            "file",
            f"ascend_audit/data/{_TABLE_CSV.get(answer.table, answer.table)}",
            f"{answer.question}: {answer.reason}",
            {"table_version": answer.table_version, "verdict": answer.verdict},
        )
    ]
    text = f"{answer.question}: {answer.reason}"
    if answer.verdict == "bad":
        return fail(text, ev)
    if answer.verdict == "unknown":
        return warn(text, ev)
    return passed(text, ev)


def _versions(ctx: Context, f: Any) -> tuple[str | None, str | None]:
    """CANN and driver versions: the deep probe, else the driver layer's version files."""
    files = optional_fact(ctx, VERSION_FILES)
    cann = f.cann_version or getattr(files, "cann_version", None)
    hdk = f.driver_version or getattr(files, "driver_version", None)
    return cann, hdk


def _import_outcome(run: Any) -> Outcome | None:
    f = run.facts
    if f.torch_npu_status == "ok":
        return None
    if f.torch_npu_status == "not_installed" and not f.package("torch"):
        return fail(f"neither torch nor torch_npu is installed in {run.python}")
    text = _IMPORT_FAIL.get(f.torch_npu_status, _IMPORT_FAIL["other"]).format(
        lib=f.missing_library or "a CANN library",
        python=run.python,
        error=(f.import_error or "?")[:200],
    )
    return fail(text, remediation=_IMPORT_FIX.get(f.torch_npu_status))


def _probe_findings(ctx: Context, run: Any) -> list[Outcome]:
    from ascend_audit.facts import compat

    f = run.facts
    torch, npu = f.package("torch") or f.torch_version, f.package("torch_npu")
    cann, hdk = _versions(ctx, f)
    out = [o for o in [_import_outcome(run)] if o]
    if torch and npu:
        out.append(_compat(compat.check_torch_torch_npu(torch, npu)))
    if npu and cann:
        out.append(_compat(compat.check_torch_npu_cann(npu, cann)))
    if f.package("vllm_ascend"):
        out.append(
            _compat(
                compat.check_vllm_ascend(
                    f.package("vllm_ascend"),
                    vllm=f.package("vllm"),
                    cann=cann,
                    torch=torch,
                    torch_npu=npu,
                    triton_ascend=f.package("triton_ascend"),
                    python=f.python_version,
                )
            )
        )
    mindie = f.package("mindie") or f.package("mindie_llm")
    if mindie:
        out.append(_compat(compat.check_mindie(mindie, cann=cann, torch_npu=npu, hdk=hdk)))
    if cann and hdk:
        out.append(_compat(compat.check_cann_hdk(cann, hdk)))
    return out


def _log_findings(ctx: Context) -> list[Outcome]:
    out = []
    for f in logs(ctx):
        for h in f.stack_errors:
            text = _LOG_STACK.get(h.signal, f"log: {h.signal}").format(value=str(h.value)[:160])
            out.append(
                fail(f"{text} ({h.source}:{h.lineno})", [hit_evidence(h)], _LOG_FIX.get(h.signal))
            )
    return out


def _stated_versions(ctx: Context, f: Any) -> dict[str, str]:
    """Versions a log or pasted collect_env output states, filled from the driver layer."""
    names = ("torch", "torch_npu", "cann", "vllm", "vllm_ascend", "driver", "mindie")
    got = {n: v for n in names if (v := f.version(n))}
    files = optional_fact(ctx, VERSION_FILES)
    for name, attr in (("cann", "cann_version"), ("driver", "driver_version")):
        if name not in got and getattr(files, attr, None):
            got[name] = getattr(files, attr)
    return got


def _version_findings(ctx: Context) -> list[Outcome]:
    """Judge the stack a log states (collect_env paste, engine lines) like the live probe."""
    from ascend_audit.facts import compat

    out: list[Outcome] = []
    for f in logs(ctx):
        v = _stated_versions(ctx, f)
        torch, npu, cann, hdk = v.get("torch"), v.get("torch_npu"), v.get("cann"), v.get("driver")
        hits = list(f.versions)
        if not hits or (not f.collect_env and len(v) < 2):
            continue  # a serving log naming its vLLM version only: nothing to pair
        where = f"{f.source}: " if len(logs(ctx)) > 1 else ""
        answers = []
        if torch and npu:
            answers.append(compat.check_torch_torch_npu(torch, npu))
        if npu and cann:
            answers.append(compat.check_torch_npu_cann(npu, cann))
        if v.get("vllm_ascend"):
            answers.append(
                compat.check_vllm_ascend(
                    v["vllm_ascend"], vllm=v.get("vllm"), cann=cann, torch=torch, torch_npu=npu
                )
            )
        if v.get("mindie"):
            answers.append(compat.check_mindie(v["mindie"], cann=cann, torch_npu=npu, hdk=hdk))
        if cann and hdk:
            answers.append(compat.check_cann_hdk(cann, hdk))
        ev = [hit_evidence(h) for h in hits[-8:]]
        stated = ", ".join(f"{k} {val}" for k, val in v.items())
        if not answers:
            out.append(
                warn(
                    f"{where}the log states {stated}: not enough to judge a pairing",
                    ev,
                    "Paste the whole collect_env.py output (with the CANN block), or audit with "
                    "--python so the probe reads the versions.",
                )
            )
            continue
        for a in answers:
            o = _compat(a)
            o.summary = f"{where}{o.summary} (stated in {f.source})"
            o.evidence = ev + o.evidence
            out.append(o)
        missing = [
            label
            for label, absent in (
                (
                    "vllm-ascend (vLLM is stated: upstream collect_env.py?)",
                    v.get("vllm") and not v.get("vllm_ascend") and not v.get("mindie"),
                ),
                ("CANN", not cann),
            )
            if absent
        ]
        # A pasted stack (collect_env, pip list, a hand-written list naming torch) without them
        # is only partly judged; a serving log naming its vLLM version is not a pasted stack.
        pasted = f.collect_env or any(
            h.signal in ("version_torch", "version_torch_npu") for h in hits
        )
        if missing and pasted:
            out.append(
                warn(
                    f"{where}{f.source} does not state {' or '.join(missing)}: the stack is only "
                    "partly judged",
                    ev,
                    "Run vllm-ascend's collect_env.py (it prints the CANN and vLLM Ascend "
                    "versions), or audit with --python.",
                )
            )
    return out


@check("FWK-STACK-001")
def stack_compatibility(ctx: Context) -> Outcome:
    reason = no_evidence(ctx)
    if reason:
        return skip(reason)
    run = ctx.fact(PROBE)
    problem = probe_problem(run)
    if problem:
        return error(problem, [probe_evidence(run)])
    findings = _log_findings(ctx)
    if run.facts is not None:
        findings = [passed("probe", [probe_evidence(run)]), *_probe_findings(ctx, run), *findings]
    else:
        findings += _version_findings(ctx)
    if run.facts is None and not findings:
        why = run.refused or (
            "no serving interpreter to probe (pass --python, or audit while vLLM / MindIE runs)"
        )
        if run.missed:
            why += f"; {run.missed}"
        return skip(why + "; no stack error in the logs")
    if run.facts is None:
        ok = "; ".join(o.summary for o in findings if o.status.value == "PASS")
        return unless_dead(ctx, worst(findings, ok or "no stack error in the serving logs"))
    out = worst(findings, "torch_npu imports; every version pairing is in the release tables")
    out.summary = f"{_installed(run.facts)}: {out.summary}"
    return unless_dead(ctx, out)


def _installed(f: Any) -> str:
    """`torch X + torch_npu Y (same base release)` — what the probe found installed."""
    from ascend_audit.facts.compat import check_torch_torch_npu

    torch, npu = f.package("torch") or f.torch_version, f.package("torch_npu")
    if not npu:
        return f"torch {torch or 'not installed'}, torch_npu not installed"
    match = check_torch_torch_npu(torch, npu).verdict
    said = {"ok": "matches torch", "bad": "does NOT match torch", "unknown": "match unknown"}
    return f"torch {torch}, torch_npu {npu} installed ({said[match]})"
