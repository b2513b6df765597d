"""`nvme list -o json` (nvme-cli 1.x and 2.x shapes): namespaces, subsystems and paths, a
secondary source beside sysfs."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

from ascend_audit.facts.common import to_jsonable
from ascend_audit.facts.sysfs import parse_nvme_address


@dataclass(frozen=True)
class NvmeCliDevice:
    """One namespace from `nvme list -o json`."""

    device_path: str | None
    namespace: int | None
    model: str | None
    serial: str | None
    firmware: str | None
    used_bytes: int | None
    physical_size: int | None
    sector_size: int | None


@dataclass(frozen=True)
class NvmeCliPath:
    """One controller path from `nvme list-subsys -o json`."""

    name: str | None
    transport: str | None
    address: str | None
    traddr: str | None
    trsvcid: str | None
    state: str | None
    ana_state: str | None


@dataclass(frozen=True)
class NvmeCliSubsystem:
    """One subsystem from `nvme list-subsys -o json`."""

    name: str | None
    nqn: str | None
    iopolicy: str | None
    paths: tuple[NvmeCliPath, ...]


@dataclass(frozen=True)
class NvmeCliList:
    """What nvme-cli's JSON (1.x or 2.x shapes) said about devices and subsystems."""

    devices: tuple[NvmeCliDevice, ...]
    subsystems: tuple[NvmeCliSubsystem, ...]
    host_nqn: str | None
    problems: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        return to_jsonable(self)


def _s(v: Any) -> str | None:
    if v is None or isinstance(v, (dict, list)):
        return None
    s = str(v).strip()
    return s or None


def _i(v: Any) -> int | None:
    if isinstance(v, bool):
        return None
    if isinstance(v, int):
        return v
    if isinstance(v, str) and re.fullmatch(r"-?\d+", v.strip()):
        return int(v.strip())
    return None


def _load_json(text: str) -> tuple[Any, str | None]:
    try:
        return json.loads(text), None
    except (ValueError, RecursionError) as exc:
        first_err = str(exc)
    # Tolerate a prompt or banner around the document.
    for opener, closer in (("{", "}"), ("[", "]")):
        start, end = text.find(opener), text.rfind(closer)
        if 0 <= start < end:
            try:
                return json.loads(text[start : end + 1]), None
            except (ValueError, RecursionError):
                continue
    return None, first_err


def _paths(raw: Any) -> tuple[NvmeCliPath, ...]:
    out = []
    for p in raw if isinstance(raw, list) else []:
        if not isinstance(p, dict):
            continue
        address = _s(p.get("Address"))
        addr = parse_nvme_address(address)
        out.append(
            NvmeCliPath(
                name=_s(p.get("Name") or p.get("Controller") or p.get("Path")),
                transport=_s(p.get("Transport")),
                address=address,
                traddr=addr.get("traddr"),
                trsvcid=addr.get("trsvcid"),
                state=_s(p.get("State")),
                ana_state=_s(p.get("ANAState")),
            )
        )
    return tuple(out)


def _subsystems(raw: Any) -> list[NvmeCliSubsystem]:
    """Subsystems from a list in either the 1.x alternating or the 2.x nested shape."""
    out: list[NvmeCliSubsystem] = []
    pending: dict[str, Any] | None = None
    for item in raw if isinstance(raw, list) else []:
        if not isinstance(item, dict):
            continue
        has_name = "Name" in item or "NQN" in item or "Subsystem" in item
        if has_name:
            if pending is not None:
                out.append(_subsystem(pending, None))
            pending = item
            if "Paths" in item or "Controllers" in item:
                out.append(_subsystem(item, item.get("Paths") or item.get("Controllers")))
                pending = None
        elif "Paths" in item:
            # nvme-cli before 1.9 printed {Name, NQN} and {Paths} as sibling objects.
            out.append(_subsystem(pending or {}, item.get("Paths")))
            pending = None
    if pending is not None:
        out.append(_subsystem(pending, None))
    return out


def _subsystem(head: dict[str, Any], paths: Any) -> NvmeCliSubsystem:
    return NvmeCliSubsystem(
        name=_s(head.get("Name") or head.get("Subsystem")),
        nqn=_s(head.get("NQN") or head.get("SubsystemNQN")),
        iopolicy=_s(head.get("IOPolicy")),
        paths=_paths(paths),
    )


def parse_nvme_list_json(text: str | None) -> NvmeCliList:
    """Parse `nvme list -o json` or `nvme list-subsys -o json` (nvme-cli 1.x and 2.x)."""
    if not isinstance(text, str) or not text.strip():
        return NvmeCliList((), (), None, ("nvme-cli: no output",))
    doc, err = _load_json(text)
    if doc is None:
        return NvmeCliList((), (), None, (f"nvme-cli: not JSON ({err})",))
    problems: list[str] = []
    devices: list[NvmeCliDevice] = []
    subsystems: list[NvmeCliSubsystem] = []
    host_nqn = None
    roots = doc if isinstance(doc, list) else [doc]
    for root in roots:
        if not isinstance(root, dict):
            continue
        host_nqn = host_nqn or _s(root.get("HostNQN"))
        subsystems.extend(_subsystems(root.get("Subsystems")))
        for dev in root.get("Devices") or []:
            if not isinstance(dev, dict):
                continue
            if "Subsystems" in dev:  # 2.x `nvme list -v` nests hosts inside Devices
                host_nqn = host_nqn or _s(dev.get("HostNQN"))
                subsystems.extend(_subsystems(dev.get("Subsystems")))
                continue
            d = NvmeCliDevice(
                device_path=_s(dev.get("DevicePath")),
                namespace=_i(dev.get("NameSpace")),
                model=_s(dev.get("ModelNumber")),
                serial=_s(dev.get("SerialNumber")),
                firmware=_s(dev.get("Firmware")),
                used_bytes=_i(dev.get("UsedBytes")),
                physical_size=_i(dev.get("PhysicalSize")),
                sector_size=_i(dev.get("SectorSize")),
            )
            for key, value in (("UsedBytes", d.used_bytes), ("PhysicalSize", d.physical_size)):
                if value is not None and value < 0:
                    # nvme-cli 2.2 printed sizes through a signed 32-bit int.
                    problems.append(f"{d.device_path}: {key} {value} is negative (nvme-cli bug)")
            devices.append(d)
    if not devices and not subsystems:
        problems.append("nvme-cli: JSON has neither Devices nor Subsystems")
    return NvmeCliList(tuple(devices), tuple(subsystems), host_nqn, tuple(problems))
