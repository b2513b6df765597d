"""Judging helper of the driver checks: is this node without any NPU at all?"""

from __future__ import annotations

from ascend_audit.context import Context
from ascend_audit.facts.driver_scan import DEV_NODES, NPU_SMI, PCI

NO_NPU = (
    "no NPU on this node: no npu-smi on PATH, no /dev/davinci* device, "
    "no Ascend PCI function (vendor 0x19e5)"
)

REFUSED_REMEDIATION = (
    "The auditor runs only a program no other user can replace. Remove the planted {tool} "
    "from PATH, or make the file, every link to it and every directory on its path owned by "
    "root and writable only by root, then audit again (`namei -l $(command -v {tool})` shows "
    "each entry's owner and mode)."
)


def no_npu_at_all(ctx: Context) -> bool:
    """True when npu-smi, PCI and /dev agree there is no NPU: the node is not an NPU node."""
    run = ctx.fact(NPU_SMI)
    pci, dev = ctx.fact(PCI), ctx.fact(DEV_NODES)
    return run.result.status == "missing" and not pci.npus and not dev.davinci_indices
