"""NPU enumeration: npu-smi answers, and npu-smi, PCI and /dev/davinci agree on what is there."""

from __future__ import annotations

from typing import Any

from ascend_audit.context import Context
from ascend_audit.facts.container import DEVICE_GRANT, DeviceGrant
from ascend_audit.facts.driver_scan import DEV_NODES, NPU_SMI, PCI
from ascend_audit.facts.npu_smi import NpuSmiInfo
from ascend_audit.model import Evidence, Outcome, fail, passed, warn
from ascend_audit.registry import check

from .npu_absent import NO_NPU, REFUSED_REMEDIATION, no_npu_at_all


def _absent_everywhere(ctx: Context) -> Outcome | None:
    """The plain case of a node without NPUs: say so with all three sources as evidence."""
    if not no_npu_at_all(ctx):
        return None
    return fail(
        NO_NPU,
        [
            ctx.fact(NPU_SMI).result.evidence(),
            Evidence("file", "/sys/bus/pci/devices", "no function with an Ascend device id"),
            Evidence("file", "/dev", "no davinci device nodes", {"davinci": []}),
        ],
        remediation="Run the audit on the NPU node itself (or pass --sysroot / --snapshot); "
        "if this is the NPU node, install the Ascend driver package (HDK) and reboot.",
    )


def dcmi_failure(run: Any) -> Outcome | None:
    """npu-smi printed a DCMI return code and no table: FAIL citing the catalog entry."""
    from ascend_audit.facts.dcmi_codes import lookup

    msgs = run.messages
    if msgs is None or not msgs.return_codes or (run.info is not None and run.info.chips):
        return None
    said = "; ".join(msgs.errors[-2:]) or f"ret is {msgs.return_codes[0]}"
    entry = lookup(msgs.return_codes[0])
    values: dict[str, Any] = {
        "return_codes": list(msgs.return_codes),
        "messages": list(msgs.errors),
    }
    if entry is None:
        return fail(
            f"npu-smi failed: {said} (DCMI return code {msgs.return_codes[0]}, not in the catalog)",
            [run.result.evidence(**values)],
        )
    values["catalog"] = entry.to_dict()
    return fail(
        f"npu-smi failed: {said}: DCMI {entry.describe()} (source: {entry.sources[0]})",
        [run.result.evidence(**values)],
        remediation=entry.remediation,
    )


@check("DRV-NPU-001")
def npu_enumeration(ctx: Context) -> Outcome:
    absent = _absent_everywhere(ctx)
    if absent:
        return absent
    run = ctx.fact(NPU_SMI)
    res = run.result
    if res.status == "timeout":
        return fail(f"npu-smi hung: {res.describe()}", [res.evidence()])
    if res.status == "refused":  # another user could replace it: root does not run it
        return fail(
            f"npu-smi was not run: {res.error}",
            [res.evidence()],
            remediation=REFUSED_REMEDIATION.format(tool="npu-smi"),
        )
    dcmi = dcmi_failure(run)
    if dcmi:
        return dcmi
    if not res.ok:
        return fail(f"npu-smi failed: {res.describe()}", [res.evidence()])
    info = run.info
    if info is None or not info.chips:
        problems = "; ".join(info.problems[:3]) if info else "empty output"
        return fail(f"npu-smi listed no NPU ({problems})", [res.evidence()])
    evidence = [res.evidence(npus=list(info.npus), chips=info.chip_count)]
    findings: list[Outcome] = []
    partial = run.messages.partial_install if run.messages is not None else None
    if partial:
        findings.append(fail(f"npu-smi warns: {partial}"))
    expected = ctx.policy["driver.expected_npu_count"]
    if expected and len(info.npus) != expected:
        findings.append(fail(f"{len(info.npus)} NPUs listed, policy expects {expected}"))
    expected_chips = ctx.policy["driver.expected_chip_count"]
    if expected_chips and info.chip_count != expected_chips:
        findings.append(fail(f"{info.chip_count} chips listed, policy expects {expected_chips}"))
    grant: DeviceGrant = ctx.fact(DEVICE_GRANT)
    if grant.in_container:
        findings += _container_check(ctx, info, grant, evidence)
    else:
        findings += _cross_check(ctx, info, evidence)
    if info.problems:
        findings.append(warn(f"npu-smi table partly unreadable: {info.problems[0]}"))
    bad = [f for f in findings if f.status.value in ("FAIL", "WARN")]
    notes = [f.summary for f in findings if f.status.value == "PASS"]
    summary = f"{len(info.npus)} NPUs / {info.chip_count} chips listed by npu-smi"
    metrics = {"npus": len(info.npus), "container": bool(grant.in_container)}
    if not bad:
        agree = (
            "the devices this container was given agree"
            if grant.in_container
            else ("PCI and /dev/davinci agree")
        )
        return passed("; ".join([f"{summary}; {agree}", *notes]), evidence, **metrics)
    status_fail = [f for f in bad if f.status.value == "FAIL"]
    worst = status_fail[0] if status_fail else bad[0]
    joined = "; ".join(f.summary for f in bad)
    return Outcome(worst.status, f"{summary}: {joined}", evidence, metrics)


def _container_check(
    ctx: Context, info: NpuSmiInfo, grant: DeviceGrant, evidence: list[Evidence]
) -> list[Outcome]:
    """In a container: npu-smi against what it was given; the host's PCI functions are inventory."""
    out: list[Outcome] = []
    given = grant.given
    evidence.append(Evidence("file", "/dev/davinci*", "", grant.to_dict()))
    if not given:
        out.append(fail("no /dev/davinciN in this container: the service cannot reach any NPU"))
    elif info.chip_count < len(given):
        ids = ", ".join(map(str, given))
        out.append(
            fail(
                f"this container was given {len(given)} NPU devices (davinci {ids}) but npu-smi "
                f"lists {info.chip_count} chips"
            )
        )
    elif info.chip_count > len(given):
        out.append(
            passed(
                f"npu-smi sees {info.chip_count} chips; this container may open {len(given)} "
                f"(davinci {', '.join(map(str, given))})"
            )
        )
    pci = ctx.fact(PCI)
    host_chips = sum(n.chips for n in pci.npus if not n.virtual_function)
    if pci.npus and host_chips != len(given):
        evidence.append(
            Evidence(
                "file",
                "/sys/bus/pci/devices",
                "\n".join(f"{n.bdf} {n.device_id} {n.family or '?'}" for n in pci.npus),
                {"pci_functions": len(pci.npus), "chips_behind_pci": host_chips},
            )
        )
        out.append(
            passed(
                f"the host's /sys shows {host_chips} Ascend chips (inventory, not this container's)"
            )
        )
    return out


def _soc_without_pci(info: NpuSmiInfo) -> bool:
    """310B (Atlas 200I A2 / 500 A2) is a SoC: its NPU has no PCI function to see."""
    return bool(info.names) and all(n.upper().startswith("310B") for n in info.names)


def _cross_check(ctx: Context, info: NpuSmiInfo, evidence: list[Evidence]) -> list[Outcome]:
    """PCI functions, /dev/davinciN and npu-smi chips must tell the same story."""
    out: list[Outcome] = []
    pci, dev = ctx.fact(PCI), ctx.fact(DEV_NODES)
    pci_chips = sum(n.chips for n in pci.npus if not n.virtual_function)
    dev_ids = dev.davinci_indices
    evidence.append(
        Evidence(
            "file",
            "/sys/bus/pci/devices",
            "\n".join(f"{n.bdf} {n.device_id} {n.family or '?'}" for n in pci.npus),
            {"pci_functions": len(pci.npus), "chips_behind_pci": pci_chips},
        )
    )
    evidence.append(Evidence("file", "/dev/davinci*", "", {"davinci": list(dev_ids)}))
    smi_bus = {c.bus_id for c in info.chips if c.bus_id}
    unseen = [n.bdf for n in pci.npus if n.bdf not in smi_bus and not n.virtual_function]
    if pci.npus and smi_bus and unseen:
        out.append(fail(f"PCI functions absent from npu-smi: {', '.join(unseen)}"))
    elif pci.npus and pci_chips != info.chip_count:
        out.append(fail(f"PCI shows {pci_chips} chips but npu-smi lists {info.chip_count}"))
    if not pci.npus and not _soc_without_pci(info):
        out.append(warn("no Ascend PCI function visible in sysfs (container without /sys?)"))
    if dev_ids and len(dev_ids) != info.chip_count:
        out.append(fail(f"{len(dev_ids)} /dev/davinci nodes but npu-smi lists {info.chip_count}"))
    if not dev_ids:
        out.append(fail("no /dev/davinciN device node: the service cannot reach any NPU"))
    return out
