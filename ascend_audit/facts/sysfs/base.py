"""sysfs attribute grammar (link speed and width, hex ids, cpulists, NVMe addresses) and
safe access to a reader: facts never raise, whatever the reader does."""

from __future__ import annotations

import posixpath
import re
from typing import Any, Protocol

from ascend_audit.facts.common import to_int

HUAWEI_VENDOR = 0x19E5

# Ascend PCI device ids -> chip family (pci.ids has no names for them).
ASCEND_DEVICE_IDS: dict[int, str] = {
    0xD100: "310",
    0xD500: "310P",
    0xD501: "310P",
    0xD801: "910",
    0xD802: "910B",
    0xD804: "910B",
    0xD805: "910B",
    0xD803: "910_93",
    0xD806: "950",
}
ASCEND_VF_DEVICE_IDS = frozenset({0xD805})

PCI_DEVICES = "/sys/bus/pci/devices"
NODE_DIR = "/sys/devices/system/node"
CLASS_NVME = "/sys/class/nvme"
CLASS_NVME_SUBSYS = "/sys/class/nvme-subsystem"
CLASS_BLOCK = "/sys/class/block"
SYS_BLOCK = "/sys/block"
DEV_CONTROL_NODES = ("/dev/davinci_manager", "/dev/devmm_svm", "/dev/hisi_hdc")

# Reading these attributes makes the kernel talk to the device (nuse issues an Identify command).
FORBIDDEN_ATTRS = frozenset({"nuse"})

MAX_CPUS = 1 << 16  # a cpulist naming more CPUs than this is garbage, not a machine

BDF_RE = re.compile(r"^[0-9a-fA-F]{4,8}:[0-9a-fA-F]{2}:[0-9a-fA-F]{2}\.[0-7]$")
_SPEED_RE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*GT/s\b", re.IGNORECASE)
_HEX_RE = re.compile(r"^\s*(?:0[xX])?([0-9a-fA-F]{1,8})\s*$")
CTRL_RE = re.compile(r"^nvme(\d+)$")
NS_RE = re.compile(r"^nvme(\d+)n(\d+)$")
PATH_RE = re.compile(r"^nvme(\d+)c(\d+)n(\d+)$")
SUBSYS_RE = re.compile(r"^nvme-subsys(\d+)$")
DAVINCI_RE = re.compile(r"^davinci(\d+)$")


class SysfsReader(Protocol):
    """The slice of the engine's Host that these gatherers need (node paths, never raises)."""

    def read_text(self, path: str) -> Any: ...

    def listdir(self, path: str) -> list[str] | None: ...

    def realpath(self, path: str) -> str: ...

    def readlink(self, path: str) -> str | None: ...

    def exists(self, path: str) -> bool: ...


class StatReader(SysfsReader, Protocol):
    """A SysfsReader that can also stat a node path."""

    def stat(self, path: str) -> Any: ...


def parse_link_speed(text: str | None) -> float | None:
    """PCIe link speed in GT/s from `16.0 GT/s PCIe`, old-kernel `16 GT/s`; None for `Unknown`."""
    if not isinstance(text, str):
        return None
    m = _SPEED_RE.match(text)
    if not m:
        return None
    try:
        value = float(m.group(1))
    except ValueError:
        return None
    return value if 0 < value < 1000 else None


def parse_link_width(text: str | None) -> int | None:
    """PCIe link width from `16` (or lspci-style `x16`); None when unreadable."""
    if not isinstance(text, str):
        return None
    s = text.strip().lower().removeprefix("x")
    if not s.isdecimal() or len(s) > 3:
        return None
    return int(s)


def parse_hex_id(text: str | None) -> int | None:
    """A sysfs hex id like `0x19e5` (or bare `19e5`) as an int; None when not hex."""
    if not isinstance(text, str):
        return None
    m = _HEX_RE.match(text)
    return int(m.group(1), 16) if m else None


def parse_int(text: str | None) -> int | None:
    """A decimal integer attribute; None when not one."""
    return to_int(text) if isinstance(text, str) else None


def parse_numa_node(text: str | None) -> int | None:
    """A `numa_node` value; `-1` (the kernel's unknown) and garbage give None."""
    value = parse_int(text)
    return value if value is not None and value >= 0 else None


def parse_cpu_ranges(text: str | None) -> tuple[tuple[int, int], ...] | None:
    """A kernel cpulist like `0-23,48-71` as inclusive ranges; `` gives (), garbage None."""
    if not isinstance(text, str):
        return None
    s = text.strip()
    if not s:
        return ()
    out: list[tuple[int, int]] = []
    for part in s.split(","):
        part = part.strip()
        m = re.fullmatch(r"(\d{1,7})(?:-(\d{1,7}))?", part)
        if not m:
            return None
        lo = int(m.group(1))
        hi = int(m.group(2)) if m.group(2) is not None else lo
        if hi < lo or hi >= MAX_CPUS:
            return None
        out.append((lo, hi))
    return tuple(out)


def parse_cpulist(text: str | None) -> tuple[int, ...] | None:
    """A kernel cpulist like `0-23,48-71` as sorted CPU numbers; `` gives (), garbage None."""
    ranges = parse_cpu_ranges(text)
    if ranges is None:
        return None
    cpus: set[int] = set()
    for lo, hi in ranges:
        cpus.update(range(lo, hi + 1))
    return tuple(sorted(cpus))


def format_cpulist(cpus: tuple[int, ...] | list[int] | None) -> str:
    """CPU numbers back to the kernel's compact `0-23,48-71` form."""
    if not cpus:
        return ""
    nums = sorted(set(cpus))
    parts: list[str] = []
    start = prev = nums[0]
    for n in nums[1:]:
        if n == prev + 1:
            prev = n
            continue
        parts.append(f"{start}-{prev}" if prev != start else str(start))
        start = prev = n
    parts.append(f"{start}-{prev}" if prev != start else str(start))
    return ",".join(parts)


def parse_nvme_address(text: str | None) -> dict[str, str]:
    """An NVMe controller `address` (`traddr=..,trsvcid=..` or a PCI BDF) as key/value pairs."""
    if not isinstance(text, str):
        return {}
    s = text.strip()
    if not s:
        return {}
    if BDF_RE.match(s) or re.fullmatch(r"[0-9a-fA-F]{2}:[0-9a-fA-F]{2}\.[0-7]", s):
        return {"traddr": s}
    out: dict[str, str] = {}
    # nvme-cli 1.x prints the fields space-separated, the kernel comma-separated.
    for item in re.split(r"[,\s]+", s):
        if "=" in item:
            key, _, value = item.partition("=")
            if key and key not in out:
                out[key.strip()] = value.strip()
    return out


def family_of(device_id: int | None) -> str | None:
    """Ascend chip family (`910B`, `310P`, …) of a PCI device id; None when not an Ascend id."""
    if device_id is None:
        return None
    return ASCEND_DEVICE_IDS.get(device_id)


def is_bdf(text: str) -> bool:
    """Whether text is a PCI address like `0000:01:00.0`."""
    return bool(BDF_RE.match(text or ""))


# ---------------------------------------------------------------------------------------------
# safe access to a reader: facts never raise, whatever the reader does


def _is_missing(error: str | None) -> bool:
    e = (error or "").lower()
    return any(k in e for k in ("no such file", "not found", "enoent", "does not exist", "missing"))


class SafeReader:
    """Wraps a reader: catches everything, remembers unexpected read errors as problems."""

    def __init__(self, reader: Any) -> None:
        self.reader = reader
        self.problems: list[str] = []

    def read(self, path: str, *, quiet: bool = False) -> str | None:
        if posixpath.basename(path) in FORBIDDEN_ATTRS:
            return None
        try:
            res = self.reader.read_text(path)
        except Exception as exc:
            self.problems.append(f"{path}: reader raised {type(exc).__name__}: {exc}")
            return None
        text = getattr(res, "text", None) if not isinstance(res, str) else res
        if text is None:
            err = getattr(res, "error", None)
            if not quiet and err and not _is_missing(err):
                self.problems.append(f"{path}: unreadable ({err})")
            return None
        if not isinstance(text, str):
            return None
        return text

    def value(self, path: str, *, quiet: bool = False) -> str | None:
        """A one-value attribute, trailing newline and surrounding blanks removed."""
        text = self.read(path, quiet=quiet)
        return text.strip() if text is not None else None

    def listdir(self, path: str) -> list[str]:
        try:
            entries = self.reader.listdir(path)
        except Exception as exc:
            self.problems.append(f"{path}: reader raised {type(exc).__name__}: {exc}")
            return []
        if not entries:
            return []
        return sorted(e for e in entries if isinstance(e, str))

    def realpath(self, path: str) -> str:
        try:
            out = self.reader.realpath(path)
        except Exception:
            return path
        return out if isinstance(out, str) and out else path

    def readlink(self, path: str) -> str | None:
        try:
            out = self.reader.readlink(path)
        except Exception:
            return None
        return out if isinstance(out, str) and out else None

    def exists(self, path: str) -> bool:
        try:
            return bool(self.reader.exists(path))
        except Exception:
            return False

    def stat(self, path: str) -> Any:
        fn = getattr(self.reader, "stat", None)
        if fn is None:
            return None
        try:
            return fn(path)
        except Exception:
            return None
