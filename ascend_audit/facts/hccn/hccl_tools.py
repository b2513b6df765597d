"""hccl_tools.py log lines: captured `-ip -g` and spod-info per device (A3 rank tables)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from ascend_audit.facts.common import Problems, split_lines, to_int, to_jsonable
from ascend_audit.facts.hccn.base import never_raises
from ascend_audit.facts.hccn.ip import ip_pairs
from ascend_audit.facts.hccn.loops import key_value

# ---------------------------------------------------------------------------------------------
# hccl_tools.py log lines (A3 rank-table generation: captured -ip -g and spod-info per device)


@dataclass(frozen=True)
class HcclToolsDevice:
    """What a rank-table generator logged for one device."""

    device: int
    ipaddr: str | None
    netmask: str | None
    super_device_id: int | None
    super_pod_id: int | None
    super_pod_size: int | None
    server_index: int | None


@dataclass(frozen=True)
class HcclToolsLog:
    """Per-device IP and SDID found in a hccl_tools.py log."""

    devices: tuple[HcclToolsDevice, ...]
    hardware_type: str | None
    visible_devices: tuple[str, ...]
    problems: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        return to_jsonable(self)


_HT_IP_RE = re.compile(r"device_id:\s*(\d{1,4}),\s*device_ip_info:\s*\[(.*)\]")
_HT_SDID_RE = re.compile(r"device_id:\s*(\d{1,4}),\s*super_device_id:\s*\[(.*)\]")
_HT_ITEM_RE = re.compile(r"'((?:[^'\\]|\\.)*)'")
_HT_HW_RE = re.compile(r"hardware_type:\s*(\S+)")
_HT_VIS_RE = re.compile(r"visible_devices:\s*\[(.*)\]")


@never_raises(lambda p: HcclToolsLog((), None, (), (p,)))
def parse_hccl_tools_log(text: str | bytes) -> HcclToolsLog:
    """Parse hccl_tools.py log lines carrying `hccn_tool -ip -g` and spod-info per device."""
    probs = Problems()
    data: dict[int, dict[str, Any]] = {}
    hw = None
    visible: tuple[str, ...] = ()
    for ln in split_lines(text):
        m = _HT_IP_RE.search(ln)
        if m:
            items = [i.replace("\\n", "\n").replace("\\t", "\t") for i in _HT_ITEM_RE.findall(ln)]
            addrs = ip_pairs("\n".join(items).split("\n"), probs, int(m.group(1)))
            slot = data.setdefault(int(m.group(1)), {})
            if addrs:
                slot["ipaddr"], slot["netmask"] = addrs[0].address, addrs[0].netmask
            continue
        m = _HT_SDID_RE.search(ln)
        if m:
            slot = data.setdefault(int(m.group(1)), {})
            for item in _HT_ITEM_RE.findall(m.group(2)):
                kv = key_value(item.replace("\\n", "").replace("\\t", ""))
                if kv:
                    slot[" ".join(kv[0].lower().split())] = to_int(kv[1])
            continue
        m = _HT_HW_RE.search(ln)
        if m:
            hw = m.group(1)
            continue
        m = _HT_VIS_RE.search(ln)
        if m:
            visible = tuple(_HT_ITEM_RE.findall(m.group(1)))
    devices = tuple(
        HcclToolsDevice(
            dev,
            d.get("ipaddr"),
            d.get("netmask"),
            d.get("sdid"),
            d.get("super pod id"),
            d.get("super pod size"),
            d.get("server index"),
        )
        for dev, d in sorted(data.items())
    )
    seen = {str(d.device) for d in devices}
    missing = [v for v in visible if v not in seen]
    if devices and missing:
        probs.add(f"visible devices without logged data: {', '.join(missing)}")
    return HcclToolsLog(devices, hw, visible, probs.result())
