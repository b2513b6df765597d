"""The auditing context: container or host, the NPUs this container was given, visible-device masks.

Pure parsers of the marker files (`/.dockerenv`, `/run/.containerenv`, `/proc/1/cgroup`,
`/proc/1/sched`), the cgroup v1 device allow-list, and the ASCEND_*_VISIBLE_DEVICES grammar.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from ascend_audit.facts.keys import FactKey

_RUNTIME_WORDS = (
    ("kubepods", "kubernetes"),
    ("docker", "docker"),
    ("libpod", "podman"),
    ("containerd", "containerd"),
    ("crio", "cri-o"),
    ("lxc", "lxc"),
)
_SCHED_RE = re.compile(r"^\s*(\S.*?)\s+\((\d+),\s*#threads")
_DEVICES_RE = re.compile(r"^([abc])\s+(\*|\d+):(\*|\d+)\s+([rwm]+)$")
_MASK_ITEM_RE = re.compile(r"^(\d{1,5})(?:-(\d{1,5}))?$")
_MAX_MASK = 4096


@dataclass(frozen=True)
class ContainerInfo:
    """Whether the audit runs in a container, which runtime, and the markers that say so."""

    in_container: bool | None  # None: no marker could be read at all
    runtime: str | None = None
    markers: tuple[str, ...] = ()

    def to_identity(self) -> dict[str, str]:
        """The host-identity fields of the report."""
        if self.in_container is None:
            return {"container": "unknown"}
        if not self.in_container:
            return {"container": "no (host)"}
        return {"container": self.runtime or "yes", "container_markers": "; ".join(self.markers)}

    def to_dict(self) -> dict[str, Any]:
        return {
            "in_container": self.in_container,
            "runtime": self.runtime,
            "markers": list(self.markers),
        }


def runtime_in_cgroup(text: str) -> str | None:
    """The container runtime a /proc/N/cgroup names (docker, kubernetes, podman …), else None."""
    low = (text or "").lower()
    for word, runtime in _RUNTIME_WORDS:
        if word in low:
            return runtime
    return None


def sched_pid(text: str) -> tuple[str, int] | None:
    """(command, host pid) from the first line of /proc/1/sched: `systemd (1, #threads: 1)`."""
    m = _SCHED_RE.match((text or "").split("\n", 1)[0])
    return (m.group(1), int(m.group(2))) if m else None


def detect_container(
    dockerenv: bool,
    containerenv: bool,
    cgroup: str | None,
    sched: str | None,
    env_container: str | None = None,
) -> ContainerInfo:
    """Judge container or host from the markers that could be read (None: not readable)."""
    markers: list[str] = []
    runtime: str | None = None
    if dockerenv:
        markers.append("/.dockerenv exists")
        runtime = "docker"
    if containerenv:
        markers.append("/run/.containerenv exists")
        runtime = runtime or "podman"
    in_cgroup = runtime_in_cgroup(cgroup or "")
    if in_cgroup:
        markers.append(f"/proc/1/cgroup names {in_cgroup}")
        runtime = in_cgroup if in_cgroup == "kubernetes" else runtime or in_cgroup
    pid = sched_pid(sched or "")
    if pid and pid[1] != 1:
        markers.append(f"/proc/1/sched: PID 1 ({pid[0]}) is host pid {pid[1]}")
    if env_container:
        markers.append(f"container={env_container} in the environment")
        runtime = runtime or env_container
    if markers:
        return ContainerInfo(True, runtime, tuple(markers))
    if cgroup is None and sched is None:
        return ContainerInfo(None)
    return ContainerInfo(False, None, ("no container marker",))


# --------------------------------------------------------------------------- device cgroup


def parse_devices_list(text: str, major: int | None) -> tuple[bool, tuple[int, ...]]:
    """cgroup v1 devices.list: (all char devices allowed, davinci minors allowed for MAJOR)."""
    allow_all = False
    minors: list[int] = []
    for raw in (text or "").splitlines():
        m = _DEVICES_RE.match(raw.strip())
        if not m:
            continue
        kind, maj, minor = m.group(1), m.group(2), m.group(3)
        if kind == "a" or (kind == "c" and maj == "*"):
            allow_all = True
        elif kind == "c" and major is not None and maj == str(major):
            if minor == "*":
                allow_all = True
            else:
                minors.append(int(minor))
    return allow_all, tuple(sorted(set(minors)))


# --------------------------------------------------------------------------- visible devices


@dataclass(frozen=True)
class DeviceMask:
    """An ASCEND_RT_VISIBLE_DEVICES / ASCEND_VISIBLE_DEVICES value, read as the runtime reads it."""

    variable: str
    raw: str
    source: str  # "process 123 environ" | "the audit's environment" | "policy"
    ids: tuple[int, ...] = ()
    problems: tuple[str, ...] = ()

    @property
    def ascending(self) -> bool:
        return all(self.ids[i] < self.ids[i + 1] for i in range(len(self.ids) - 1))

    @property
    def duplicates(self) -> tuple[int, ...]:
        return tuple(sorted({i for i in self.ids if self.ids.count(i) > 1}))

    def to_dict(self) -> dict[str, Any]:
        return {
            "variable": self.variable,
            "value": self.raw,
            "source": self.source,
            "ids": list(self.ids),
            "problems": list(self.problems),
        }


def parse_mask(variable: str, raw: str, source: str, ranges: bool = False) -> DeviceMask:
    """Comma-separated device ids (`0,1,2,3`); RANGES also takes `0-3` (the Docker runtime's)."""
    ids: list[int] = []
    problems: list[str] = []
    text = (raw or "").strip()
    if not text:
        problems.append("empty")
    for item in text.split(",") if text else ():
        item = item.strip()
        m = _MASK_ITEM_RE.match(item)
        if not m:
            problems.append(f"{item!r} is not a device id")
            continue
        low, high = int(m.group(1)), m.group(2)
        if high is None:
            ids.append(low)
        elif not ranges:
            problems.append(f"{item!r}: the runtime takes a comma list, not a range")
        elif int(high) < low or int(high) - low > _MAX_MASK:
            problems.append(f"{item!r} is not a range")
        else:
            ids.extend(range(low, int(high) + 1))
        if len(ids) > _MAX_MASK:
            problems.append("too many ids")
            break
    return DeviceMask(variable, raw, source, tuple(ids), tuple(problems))


@dataclass(frozen=True)
class DeviceGrant:
    """The NPUs this node or container exposes, and where that was read."""

    in_container: bool | None
    davinci: tuple[int, ...]  # /dev/davinciN present
    cgroup_allowed: tuple[int, ...] | None = None  # davinci minors the device cgroup allows
    masks: tuple[DeviceMask, ...] = ()
    sources: tuple[str, ...] = field(default_factory=tuple)

    @property
    def given(self) -> tuple[int, ...]:
        """davinci ids the service can open: present in /dev and allowed by the device cgroup."""
        if self.cgroup_allowed is None:
            return self.davinci
        return tuple(i for i in self.davinci if i in set(self.cgroup_allowed))

    def mask(self, variable: str) -> DeviceMask | None:
        return next((m for m in self.masks if m.variable == variable), None)

    def to_dict(self) -> dict[str, Any]:
        return {
            "in_container": self.in_container,
            "davinci": list(self.davinci),
            "cgroup_allowed": None if self.cgroup_allowed is None else list(self.cgroup_allowed),
            "given": list(self.given),
            "masks": [m.to_dict() for m in self.masks],
            "sources": list(self.sources),
        }


CONTAINER: FactKey[ContainerInfo] = FactKey("container")
DEVICE_GRANT: FactKey[DeviceGrant] = FactKey("device_grant")
