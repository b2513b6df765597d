"""Parsers for Ascend version files, and comparisons that understand Ascend version strings."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from ascend_audit.facts import huawei_version

__all__ = [
    "AscendInstallInfo",
    "Compatibility",
    "DriverVersionInfo",
    "FirmwareVersionInfo",
    "ToolkitInstallInfo",
    "VersionRange",
    "compare_versions",
    "driver_accepts_firmware",
    "driver_accepts_toolkit",
    "driver_firmware_compatibility",
    "firmware_accepts_driver",
    "inner_family",
    "parse_ascend_install_info",
    "parse_driver_version_info",
    "parse_firmware_version_info",
    "parse_key_values",
    "parse_toolkit_install_info",
    "parse_version",
    "split_dump_sections",
    "toolkit_accepts_driver",
    "version_in_range",
]

_MAX_PROBLEMS = 100
_CAT_N_RE = re.compile(r"^\d{1,6}\s+(?=[A-Za-z_][\w.-]*\s*=)")  # `cat -n` line numbers
_PATH_ARCH_RE = re.compile(r"(x86_64|aarch64|arm64)-linux")


def _lines(text: str) -> list[str]:
    if not isinstance(text, str):
        return []
    return text.replace("\x00", "").replace("\r\n", "\n").replace("\r", "\n").split("\n")


# --------------------------------------------------------------------------- version logic


def parse_version(version: str) -> Any:
    """Sort key of an Ascend version (the grammar of facts/huawei_version.py)."""
    return huawei_version.sort_key(version)


def compare_versions(a: str, b: str) -> int:
    """-1, 0 or 1 as Ascend version a sorts before, equal to, or after b."""
    return huawei_version.compare(a, b)


@dataclass(frozen=True)
class VersionRange:
    """`[low,high]` from a compatibility list; a high ending in `.` covers that prefix's family."""

    low: str
    high: str

    def contains(self, version: str) -> bool:
        """True when VERSION lies within the range."""
        return version_in_range(version, self.low, self.high)

    def __str__(self) -> str:
        return f"[{self.low},{self.high}]"

    def to_dict(self) -> dict[str, str]:
        """JSON-serialisable form."""
        return {"low": self.low, "high": self.high}


def version_in_range(version: str, low: str, high: str) -> bool:
    """True when low <= version <= high; `high` ending in `.` also admits anything under it."""
    return huawei_version.in_range(version, low, high)


def _bracket_lists(value: str) -> tuple[tuple[str, ...], ...]:
    """`[a,b],[c]` -> (("a", "b"), ("c",)); text outside brackets is ignored."""
    out: list[tuple[str, ...]] = []
    depth_start = -1
    for i, ch in enumerate(value):
        if ch == "[":
            depth_start = i
        elif ch == "]" and depth_start >= 0:
            inner = value[depth_start + 1 : i]
            out.append(tuple(p.strip() for p in inner.split(",")))
            depth_start = -1
    return tuple(out)


def _ranges(value: str) -> tuple[VersionRange, ...]:
    out: list[VersionRange] = []
    for parts in _bracket_lists(value):
        if len(parts) == 1 and parts[0]:
            out.append(VersionRange(parts[0], parts[0]))
        elif len(parts) >= 2:
            out.append(VersionRange(parts[0], parts[-1]))
    return tuple(out)


def inner_family(inner_version: str) -> tuple[int, int, int] | None:
    """`V100R001C15SPC006B220` -> (100, 1, 15); None when it is not an inner version."""
    parsed = huawei_version.parse_inner(inner_version)
    return parsed.family if parsed else None


def _family_in(inner_version: str | None, families: tuple[VersionRange, ...]) -> bool | None:
    """Whether an inner version is in one of FAMILIES (single or [low,high]); None if unknown."""
    if not inner_version or not families:
        return None
    fam = inner_family(inner_version)
    if fam is None:
        return None
    for r in families:
        lo, hi = inner_family(r.low), inner_family(r.high)
        if lo is not None and hi is not None and lo <= fam <= hi:
            return True
    return False


# --------------------------------------------------------------------------- key=value files


def parse_key_values(text: str) -> tuple[tuple[tuple[str, str], ...], tuple[str, ...]]:
    """Read `key=value` lines; returns (pairs in order, problems). Never raises."""
    pairs: list[tuple[str, str]] = []
    problems: list[str] = []
    for n, raw in enumerate(_lines(text), 1):
        s = _CAT_N_RE.sub("", raw.strip())
        if not s or s.startswith(("#", "```")) or (s.startswith("/") and "=" not in s):
            continue  # comments, pasted fences, and a caption naming the file are not content
        key, sep, value = s.partition("=")
        key = key.strip()
        if not sep or not key or " " in key or len(key) > 80:
            if len(problems) < _MAX_PROBLEMS:
                problems.append(f"line {n}: not a key=value line: {s[:120]!r}")
            continue
        pairs.append((key, value.strip()))
    return tuple(pairs), tuple(problems)


def _lookup(pairs: tuple[tuple[str, str], ...], *names: str) -> str | None:
    wanted = {n.lower() for n in names}
    for k, v in pairs:
        if k.lower() in wanted:
            return v or None
    return None


def _dupes(pairs: tuple[tuple[str, str], ...]) -> list[str]:
    seen: set[str] = set()
    out: list[str] = []
    for k, _ in pairs:
        lk = k.lower()
        if lk in seen and len(out) < 10:
            out.append(f"key {k!r} appears more than once; the first is used")
        seen.add(lk)
    return out


@dataclass(frozen=True)
class DriverVersionInfo:
    """`/usr/local/Ascend/driver/version.info`."""

    version: str | None = None
    inner_version: str | None = None
    package_version: str | None = None
    compatible_inner: tuple[VersionRange, ...] = ()
    compatible_firmware: tuple[VersionRange, ...] = ()
    fields: tuple[tuple[str, str], ...] = ()
    problems: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        """JSON-serialisable form."""
        return {
            "version": self.version,
            "inner_version": self.inner_version,
            "package_version": self.package_version,
            "compatible_inner": [str(r) for r in self.compatible_inner],
            "compatible_firmware": [str(r) for r in self.compatible_firmware],
            "fields": dict(self.fields),
            "problems": list(self.problems),
        }


@dataclass(frozen=True)
class FirmwareVersionInfo:
    """`/usr/local/Ascend/firmware/version.info`."""

    version: str | None = None
    package_version: str | None = None
    firmware_version: str | None = None
    compatible_driver: tuple[VersionRange, ...] = ()
    fields: tuple[tuple[str, str], ...] = ()
    problems: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        """JSON-serialisable form."""
        return {
            "version": self.version,
            "package_version": self.package_version,
            "firmware_version": self.firmware_version,
            "compatible_driver": [str(r) for r in self.compatible_driver],
            "fields": dict(self.fields),
            "problems": list(self.problems),
        }


@dataclass(frozen=True)
class ToolkitInstallInfo:
    """CANN `ascend_toolkit_install.info` (also nnae and other `*_install.info` of CANN)."""

    package_name: str | None = None
    version: str | None = None
    inner_version: str | None = None
    compatible_inner: tuple[VersionRange, ...] = ()
    arch: str | None = None
    os: str | None = None
    path: str | None = None
    layout: str | None = None
    fields: tuple[tuple[str, str], ...] = ()
    problems: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        """JSON-serialisable form."""
        return {
            "package_name": self.package_name,
            "version": self.version,
            "inner_version": self.inner_version,
            "compatible_inner": [str(r) for r in self.compatible_inner],
            "arch": self.arch,
            "os": self.os,
            "path": self.path,
            "layout": self.layout,
            "fields": dict(self.fields),
            "problems": list(self.problems),
        }


@dataclass(frozen=True)
class AscendInstallInfo:
    """`/etc/ascend_install.info`: who installed the driver and firmware, and where."""

    user_name: str | None = None
    user_group: str | None = None
    driver_install_path: str | None = None
    driver_install_type: str | None = None
    driver_install_mode: str | None = None
    driver_install_for_all: bool | None = None
    firmware_install_path: str | None = None
    firmware_install_type: str | None = None
    driver_install_status: str | None = None  # `complete` once the installer finished
    fields: tuple[tuple[str, str], ...] = ()
    problems: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        """JSON-serialisable form."""
        return {
            "user_name": self.user_name,
            "user_group": self.user_group,
            "driver_install_path": self.driver_install_path,
            "driver_install_type": self.driver_install_type,
            "driver_install_mode": self.driver_install_mode,
            "driver_install_for_all": self.driver_install_for_all,
            "firmware_install_path": self.firmware_install_path,
            "firmware_install_type": self.firmware_install_type,
            "driver_install_status": self.driver_install_status,
            "fields": dict(self.fields),
            "problems": list(self.problems),
        }


def parse_driver_version_info(text: str) -> DriverVersionInfo:
    """Parse the driver's `version.info`."""
    pairs, probs = parse_key_values(text)
    problems = [*probs, *_dupes(pairs)]
    version = _lookup(pairs, "Version")
    if version is None:
        problems.append("no Version= line")
    fw = _lookup(pairs, "compatible_version_fw")
    fw_ranges = _ranges(fw) if fw else ()
    if fw and not fw_ranges:
        problems.append(f"unreadable compatible_version_fw {fw!r}")
    inner = _lookup(pairs, "compatible_version")
    return DriverVersionInfo(
        version=version,
        inner_version=_lookup(pairs, "Innerversion"),
        package_version=_lookup(pairs, "package_version"),
        compatible_inner=_ranges(inner) if inner else (),
        compatible_firmware=fw_ranges,
        fields=pairs,
        problems=tuple(problems),
    )


def parse_firmware_version_info(text: str) -> FirmwareVersionInfo:
    """Parse the firmware's `version.info`."""
    pairs, probs = parse_key_values(text)
    problems = [*probs, *_dupes(pairs)]
    version = _lookup(pairs, "Version")
    if version is None:
        problems.append("no Version= line")
    drv = _lookup(pairs, "compatible_version_drv")
    ranges = _ranges(drv) if drv else ()
    if drv and not ranges:
        problems.append(f"unreadable compatible_version_drv {drv!r}")
    return FirmwareVersionInfo(
        version=version,
        package_version=_lookup(pairs, "package_version"),
        firmware_version=_lookup(pairs, "firmware_version"),
        compatible_driver=ranges,
        fields=pairs,
        problems=tuple(problems),
    )


def parse_toolkit_install_info(text: str, source_path: str | None = None) -> ToolkitInstallInfo:
    """Parse CANN's `ascend_toolkit_install.info`; SOURCE_PATH (where it was read) sets `layout`."""
    pairs, probs = parse_key_values(text)
    problems = [*probs, *_dupes(pairs)]
    version = _lookup(pairs, "version")
    if version is None:
        problems.append("no version= line")
    path = _lookup(pairs, "path")
    arch = _lookup(pairs, "arch")
    if arch is None:
        m = _PATH_ARCH_RE.search(source_path or path or "")
        arch = m.group(1) if m else None
    layout = None
    where = source_path or path or ""
    if "/ascend-toolkit/" in where:
        layout = "ascend-toolkit"
    elif "/cann/" in where or "/cann-" in where:
        layout = "cann"
    elif "/nnae/" in where:
        layout = "nnae"
    compat = _lookup(pairs, "compatible_version")
    return ToolkitInstallInfo(
        package_name=_lookup(pairs, "package_name"),
        version=version,
        inner_version=_lookup(pairs, "innerversion"),
        compatible_inner=_ranges(compat) if compat else (),
        arch=arch,
        os=_lookup(pairs, "os"),
        path=path,
        layout=layout,
        fields=pairs,
        problems=tuple(problems),
    )


def _yes(value: str | None) -> bool | None:
    if value is None:
        return None
    v = value.strip().lower()
    if v in ("yes", "y", "true", "1"):
        return True
    if v in ("no", "n", "false", "0"):
        return False
    return None


def parse_ascend_install_info(text: str) -> AscendInstallInfo:
    """Parse `/etc/ascend_install.info`."""
    pairs, probs = parse_key_values(text)
    problems = [*probs, *_dupes(pairs)]
    if not pairs:
        problems.append("no key=value lines")
    return AscendInstallInfo(
        user_name=_lookup(pairs, "UserName"),
        user_group=_lookup(pairs, "UserGroup"),
        driver_install_path=_lookup(pairs, "Driver_Install_Path_Param"),
        driver_install_type=_lookup(pairs, "Driver_Install_Type"),
        driver_install_mode=_lookup(pairs, "Driver_Install_Mode"),
        driver_install_for_all=_yes(_lookup(pairs, "Driver_Install_For_All")),
        firmware_install_path=_lookup(pairs, "Firmware_Install_Path_Param"),
        firmware_install_type=_lookup(pairs, "Firmware_Install_Type"),
        driver_install_status=_lookup(pairs, "Driver_Install_Status"),
        fields=pairs,
        problems=tuple(problems),
    )


def split_dump_sections(text: str) -> tuple[tuple[str, str], ...]:
    """Split a collector dump into (`cat` path or command line, body) sections."""
    sections: list[tuple[str, list[str]]] = []
    for raw in _lines(text):
        s = raw.strip()
        cmd = s.lstrip("$#> ").strip()
        if cmd.startswith("cat ") or cmd.startswith(("/usr/", "usr/", "pip ", "lspci", "npu-smi")):
            name = cmd[4:].strip() if cmd.startswith("cat ") else cmd
            sections.append((name, []))
        elif sections:
            sections[-1][1].append(raw)
    return tuple((name, "\n".join(body).strip("\n")) for name, body in sections)


# --------------------------------------------------------------------------- compatibility


@dataclass(frozen=True)
class Compatibility:
    """The answer of one compatibility question, with the reason in words."""

    accepted: bool | None
    reason: str

    def __bool__(self) -> bool:
        return bool(self.accepted)

    def to_dict(self) -> dict[str, Any]:
        """JSON-serialisable form."""
        return {"accepted": self.accepted, "reason": self.reason}


def driver_accepts_firmware(
    driver: DriverVersionInfo, firmware: FirmwareVersionInfo
) -> Compatibility:
    """Whether the driver's `compatible_version_fw` admits the installed firmware version."""
    if not firmware.version:
        return Compatibility(None, "firmware version unknown")
    if not driver.compatible_firmware:
        return Compatibility(None, "driver version.info names no compatible firmware range")
    ranges = ",".join(str(r) for r in driver.compatible_firmware)
    for r in driver.compatible_firmware:
        if r.contains(firmware.version):
            return Compatibility(True, f"firmware {firmware.version} is within {r}")
    return Compatibility(False, f"firmware {firmware.version} is outside driver range {ranges}")


def firmware_accepts_driver(
    firmware: FirmwareVersionInfo, driver: DriverVersionInfo
) -> Compatibility:
    """Whether the firmware's `compatible_version_drv` admits the installed driver version."""
    if not driver.version:
        return Compatibility(None, "driver version unknown")
    if not firmware.compatible_driver:
        return Compatibility(None, "firmware version.info names no compatible driver range")
    ranges = ",".join(str(r) for r in firmware.compatible_driver)
    for r in firmware.compatible_driver:
        if r.contains(driver.version):
            return Compatibility(True, f"driver {driver.version} is within {r}")
    return Compatibility(False, f"driver {driver.version} is outside firmware range {ranges}")


def driver_firmware_compatibility(
    driver: DriverVersionInfo, firmware: FirmwareVersionInfo
) -> Compatibility:
    """Both directions at once: False when either side rejects the other."""
    a = driver_accepts_firmware(driver, firmware)
    b = firmware_accepts_driver(firmware, driver)
    if a.accepted is False or b.accepted is False:
        return Compatibility(False, "; ".join(c.reason for c in (a, b) if c.accepted is False))
    if a.accepted and b.accepted:
        return Compatibility(True, f"{a.reason}; {b.reason}")
    return Compatibility(None, "; ".join(c.reason for c in (a, b) if c.accepted is None))


def toolkit_accepts_driver(toolkit: ToolkitInstallInfo, driver: DriverVersionInfo) -> Compatibility:
    """Whether the toolkit's `compatible_version` names the driver's inner-version family."""
    if not driver.inner_version:
        return Compatibility(None, "driver Innerversion unknown")
    if not toolkit.compatible_inner:
        return Compatibility(None, "toolkit install.info names no compatible driver family")
    ok = _family_in(driver.inner_version, toolkit.compatible_inner)
    names = ",".join(str(r) for r in toolkit.compatible_inner)
    if ok is None:
        return Compatibility(None, f"unreadable driver Innerversion {driver.inner_version!r}")
    verb = "is" if ok else "is not"
    return Compatibility(ok, f"driver {driver.inner_version} {verb} in toolkit families {names}")


def driver_accepts_toolkit(driver: DriverVersionInfo, toolkit: ToolkitInstallInfo) -> Compatibility:
    """Whether the driver's `compatible_version` names the toolkit's inner-version family."""
    if not toolkit.inner_version:
        return Compatibility(None, "toolkit innerversion unknown")
    if not driver.compatible_inner:
        return Compatibility(None, "driver version.info names no compatible toolkit family")
    ok = _family_in(toolkit.inner_version, driver.compatible_inner)
    names = ",".join(str(r) for r in driver.compatible_inner)
    if ok is None:
        return Compatibility(None, f"unreadable toolkit innerversion {toolkit.inner_version!r}")
    verb = "is" if ok else "is not"
    return Compatibility(ok, f"toolkit {toolkit.inner_version} {verb} in driver families {names}")
