"""Accessory stack: ATB, opp_kernel, MindIE, atb-models pair with CANN; the chip is supported."""

from __future__ import annotations

from ascend_audit.context import Context
from ascend_audit.facts import compat
from ascend_audit.facts.accessory import (
    ACCESSORY_STACK,
    AccessoryStack,
    StackRule,
    chip_family,
    load_rules,
    release_of,
)
from ascend_audit.model import Evidence, Outcome, Status, fail, skip, warn, worst
from ascend_audit.registry import check

LABEL = {
    "atb": "NNAL/ATB",
    "opp_kernel": "opp_kernel",
    "mindie": "MindIE",
    "atb_models": "atb-models",
}


def _rule(name: str) -> StackRule | None:
    return next((r for r in load_rules() if r.rule == name), None)


def _finding(rule: StackRule | None, text: str) -> Outcome:
    src = f" [source: {rule.source}]" if rule else ""
    verdict = rule.verdict if rule else "WARN"
    if verdict == "FAIL":
        return fail(text + src)
    return warn(text + src)


def _absent(err: str | None) -> bool:
    e = (err or "").lower()
    return "no such file" in e or "not recorded" in e or "not a directory" in e


def _component_evidence(s: AccessoryStack) -> list[Evidence]:
    out = []
    for c in s.components:
        if c.version is not None or not _absent(c.error):
            out.append(Evidence("file", c.path, c.excerpt or c.error or "", {"version": c.version}))
    return out


def _pair(
    s: AccessoryStack, name: str, rule_name: str, findings: list[Outcome], ok: list[str]
) -> None:
    c = s.get(name)
    if c is None or c.version is None:
        return
    if s.cann is None:
        findings.append(
            warn(f"{LABEL[name]} {c.version}: CANN toolkit version unknown, cannot pair")
        )
        return
    if release_of(c.version) != release_of(s.cann):
        findings.append(
            _finding(
                _rule(rule_name),
                f"{LABEL[name]} {c.version} ({c.path}) is release {release_of(c.version)}, "
                f"CANN toolkit {s.cann} is {release_of(s.cann)}",
            )
        )
    else:
        ok.append(f"{LABEL[name]} {c.version}")


@check("FWK-ACC-001")
def accessory_versions(ctx: Context) -> Outcome:
    s = ctx.fact(ACCESSORY_STACK)
    present = [c for c in s.components if c.version is not None]
    broken = [c for c in s.components if c.version is None and c.error is None]
    unreadable = [c for c in s.components if c.error and not _absent(c.error)]
    ev = _component_evidence(s)
    if s.cann:
        ev.append(Evidence("file", s.cann_source or "CANN toolkit", f"CANN {s.cann}"))
    if not present and not broken and not unreadable:
        return skip("no NNAL/ATB, opp_kernel, MindIE or atb-models version file on this node", ev)
    findings: list[Outcome] = []
    ok: list[str] = []
    for c in broken:
        findings.append(warn(f"{c.path}: no version line found ({LABEL[c.name]})"))
    for c in unreadable:
        findings.append(warn(f"{c.path}: unreadable ({c.error})"))
    _pair(s, "atb", "atb_cann", findings, ok)
    _pair(s, "opp_kernel", "opp_kernel_cann", findings, ok)
    mindie = s.get("mindie")
    if mindie is not None and mindie.version is not None:
        ans = compat.check_mindie(mindie.version, cann=s.cann)
        if ans.verdict == "bad":
            findings.append(
                _finding(_rule("mindie_cann"), f"MindIE {mindie.version}: {ans.reason}")
            )
        else:
            ok.append(f"MindIE {mindie.version} ({ans.reason})")
        models = s.get("atb_models")
        if models is not None and models.version is not None:
            if release_of(models.version) != release_of(mindie.version):
                findings.append(
                    _finding(
                        _rule("atb_models_mindie"),
                        f"atb-models {models.version} is not from MindIE "
                        f"{mindie.version}'s release",
                    )
                )
            else:
                ok.append(f"atb-models {models.version}")
    out = worst(findings, f"{', '.join(ok) or 'accessories'} pair with CANN {s.cann or '?'}")
    out.evidence = ev
    if out.status is Status.PASS and not ok:
        return skip("accessory versions found, but nothing could be paired", ev)
    return out


def _build_family(s: AccessoryStack) -> str | None:
    for value in (s.build_soc_version, s.build_device_type):
        fam = chip_family(value)
        if fam:
            return fam
        v = (value or "").strip().upper().lstrip("_")
        if v in ("A2", "A3", "310P", "310B", "950"):
            return v
    return None


@check("FWK-CHIP-001")
def chip_supported(ctx: Context) -> Outcome:
    s = ctx.fact(ACCESSORY_STACK)
    fams = sorted({f for f in (chip_family(c) for c in s.chips) if f})
    if not fams:
        return skip("chip family unknown (no npu-smi chip name this check knows)")
    ev = [Evidence("command", "npu-smi info", "chips: " + ", ".join(s.chips), {"families": fams})]
    if s.packages:
        pk = ", ".join(f"{k} {v}" for k, v in s.packages)
        ev.append(Evidence("probe", s.probe_source, pk, {"build_device_type": s.build_device_type}))
    findings: list[Outcome] = []
    judged: list[str] = []
    vllm_ascend = s.package("vllm_ascend")
    triton = s.package("triton_ascend")
    for r in load_rules():
        if not r.chip_family or r.chip_family not in fams:
            continue
        if r.component == "vllm_ascend" and vllm_ascend:
            text = f"chip {r.chip_family} with vllm-ascend {vllm_ascend}: {r.expect}"
            if r.verdict == "PASS":
                judged.append(text)
            else:
                findings.append(_finding(r, text))
        elif r.component == "triton_ascend" and triton:
            findings.append(
                _finding(r, f"chip {r.chip_family} with triton-ascend {triton}: {r.expect}")
            )
    built = _build_family(s)
    if vllm_ascend and built:
        if built not in fams:
            findings.append(
                _finding(
                    _rule("build_target"),
                    f"vllm-ascend {vllm_ascend} was built for {built} "
                    f"({s.build_soc_version or s.build_device_type}), "
                    f"the chips are {', '.join(fams)}",
                )
            )
        else:
            judged.append(f"vllm-ascend built for {built}")
    if not findings and not judged:
        return skip(
            f"chips {', '.join(fams)}: no serving stack known to judge them against "
            "(no probe of vllm-ascend)",
            ev,
        )
    out = worst(findings, f"chips {', '.join(fams)} ({', '.join(s.chips)}): " + "; ".join(judged))
    out.evidence = ev
    return out
