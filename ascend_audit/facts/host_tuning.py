"""Host tuning facts: what the tuning files, CPU governors and service limits say (pure text)."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from ascend_audit.facts.keys import FactKey
from ascend_audit.host.base import FileRead, ProcessInfo

HYPERVISOR_VENDORS = (
    "qemu",
    "kvm",
    "vmware",
    "virtualbox",
    "innotek",
    "xen",
    "bochs",
    "openstack",
    "parallels",
    "microsoft corporation",  # Hyper-V (with product "Virtual Machine")
    "amazon ec2",
    "google compute engine",
    "alibaba cloud ecs",
)
_LIMIT_LINE_RE = re.compile(r"^(Max [A-Za-z ]+?)\s{2,}(\S+)\s+(\S+)")
UNLIMITED = -1


@dataclass(frozen=True)
class Limits:
    """Soft open-file and locked-memory limits of the service, and where they were read."""

    nofile: int | None  # UNLIMITED for unlimited
    memlock_bytes: int | None  # UNLIMITED for unlimited
    source: str  # "/proc/123/limits" | "/etc/security/limits.conf (+ limits.d) for user X" | ""
    lines: tuple[str, ...] = ()


@dataclass(frozen=True)
class HostTuning:
    """Everything DRV-HOST-00x judges, each with the read it came from."""

    governors: dict[int, str]  # cpu -> scaling_governor
    cpus_listed: int
    reads: dict[str, FileRead] = field(default_factory=dict)
    limits: Limits | None = None
    process: ProcessInfo | None = None

    def text(self, path: str) -> str | None:
        r = self.reads.get(path)
        return r.text.strip() if r is not None and r.text is not None else None


def _limit_value(raw: str, unit_bytes: int = 1) -> int | None:
    v = raw.strip().lower()
    if v in ("unlimited", "infinity", "-1"):
        return UNLIMITED
    return int(v) * unit_bytes if v.isdigit() else None


def parse_proc_limits(text: str) -> tuple[int | None, int | None, list[str]]:
    """(nofile soft, memlock soft in bytes, the two lines) from /proc/<pid>/limits."""
    nofile = memlock = None
    lines = []
    for line in text.splitlines():
        m = _LIMIT_LINE_RE.match(line)
        if not m:
            continue
        if m.group(1) == "Max open files":
            nofile = _limit_value(m.group(2))
        elif m.group(1) == "Max locked memory":
            memlock = _limit_value(m.group(2))
        else:
            continue
        lines.append(line.rstrip())
    return nofile, memlock, lines


def parse_limits_conf(texts: list[str], user: str | None) -> tuple[int | None, int | None, list]:
    """Soft nofile and memlock (bytes) for `user` from limits.conf texts (later files win;
    a user's own line beats `*`)."""
    best: dict[str, tuple[int, int | None, str]] = {}  # item -> (rank, value, line)
    for text in texts:
        for raw in text.splitlines():
            line = raw.split("#", 1)[0].strip()
            parts = line.split()
            if len(parts) != 4:
                continue
            domain, kind, item, value = parts
            if kind not in ("soft", "-") or item not in ("nofile", "memlock"):
                continue
            rank = 2 if user and domain == user else 1 if domain == "*" else 0
            if not rank:
                continue
            unit = 1024 if item == "memlock" else 1
            if rank >= best.get(item, (0, None, ""))[0]:
                best[item] = (rank, _limit_value(value, unit), raw.strip())
    lines = [v[2] for v in best.values()]
    return best.get("nofile", (0, None, ""))[1], best.get("memlock", (0, None, ""))[1], lines


def thp_mode(text: str | None) -> str | None:
    """The bracketed choice of transparent_hugepage/enabled (`always [madvise] never`)."""
    m = re.search(r"\[(\w+)\]", text or "")
    return m.group(1) if m else None


def swap_devices(text: str | None) -> list[str]:
    """Active swap areas listed in /proc/swaps."""
    lines = (text or "").splitlines()[1:]
    return [ln.split()[0] for ln in lines if ln.strip()]


def meminfo_kb(text: str | None, key: str) -> int | None:
    m = re.search(rf"^{re.escape(key)}:\s+(\d+)", text or "", re.MULTILINE)
    return int(m.group(1)) if m else None


def release_tuple(text: str | None) -> tuple[int, ...]:
    m = re.match(r"(\d+(?:\.\d+)*)", (text or "").strip())
    return tuple(int(x) for x in m.group(1).split(".")) if m else ()


def virtual_machine(t: HostTuning) -> tuple[bool | None, str]:
    """Whether the node is a VM, and the evidence line (None when nothing could be read)."""
    vendor = (t.text("/sys/class/dmi/id/sys_vendor") or "").lower()
    product = (t.text("/sys/class/dmi/id/product_name") or "").lower()
    cpuinfo = t.text("/proc/cpuinfo")
    flags = next((ln for ln in (cpuinfo or "").splitlines() if ln.startswith("flags")), "")
    for v in HYPERVISOR_VENDORS:
        if v in vendor or v in product:
            if v == "microsoft corporation" and "virtual" not in product:
                continue
            return True, f"DMI vendor/product {vendor!r} / {product!r}"
    if " hypervisor" in f" {flags} ":
        return True, "/proc/cpuinfo flags carry `hypervisor`"
    if not (vendor or product or cpuinfo):
        return None, "DMI and /proc/cpuinfo unreadable"
    return False, f"DMI vendor {vendor or '?'!r}, product {product or '?'!r}, no hypervisor flag"


HOST_TUNING: FactKey[HostTuning] = FactKey("host_tuning")
