"""Parsers for `hccn_tool -i N <sub> -g` outputs, pasted loops of them, and /etc/hccn.conf."""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import datetime
from typing import Any, TypeVar

from ascend_audit.facts.common import Problems as _Problems
from ascend_audit.facts.common import to_jsonable as _jsonable

__all__ = [
    "HCCN_ERRORS",
    "NET_HEALTH_CODES",
    "DeviceChunk",
    "DeviceFec",
    "DeviceGateway",
    "DeviceIp",
    "DeviceLink",
    "DeviceLinkStat",
    "DeviceNetHealth",
    "DeviceNetdetect",
    "DevicePing",
    "DeviceStat",
    "DeviceTls",
    "FecFacts",
    "GatewayFacts",
    "HcclToolsDevice",
    "HcclToolsLog",
    "HccnConf",
    "HccnConfDevice",
    "IpAddress",
    "IpFacts",
    "LinkFacts",
    "LinkRecord",
    "LinkStatFacts",
    "LldpFacts",
    "LldpNeighbour",
    "LoopSplit",
    "NetHealthFacts",
    "NetdetectFacts",
    "OpticalFacts",
    "OpticalModule",
    "PingFacts",
    "StatFacts",
    "TlsCert",
    "TlsFacts",
    "parse_fec",
    "parse_gateway",
    "parse_hccl_tools_log",
    "parse_hccn_conf",
    "parse_ip",
    "parse_link",
    "parse_link_stat",
    "parse_lldp",
    "parse_net_health",
    "parse_netdetect",
    "parse_optical",
    "parse_ping",
    "parse_stat",
    "parse_tls",
    "split_loop_output",
]

_MAX_LINE = 4096  # longer lines are cut before any regex sees them
_NA = frozenset({"", "NA", "N/A", "na", "-", "--", "not supported", "get failed"})

# Error strings printed by hccn_tool (cmd.c error table); any of them means "no data".
HCCN_ERRORS: tuple[str, ...] = (
    "Command execute failed",
    "Get ipconf failed",
    "Get gateway failed",
    "Control link unreachable",
    "The system is in optical module initializing",
    "Command unsupported on this optical module",
    "Execute failed",
    "Get unknown option",
    "hccn_tool: command not found",
    "hccn_tool not found",
    "No such file or directory",
    "Permission denied",
)
_ERROR_RE = re.compile("|".join(re.escape(e) for e in HCCN_ERRORS), re.IGNORECASE)

# DCMI network-health codes and the text the 910B tool prints for them.
NET_HEALTH_CODES: dict[str, int] = {
    "Success": 0,
    "Socket fail": 1,
    "Receive timeout": 2,
    "Unreachable": 3,
    "Time exceeded": 4,
    "Fault": 5,
    "Init": 6,
    "Thread error": 7,
    "Detect ip set": 8,
    "Unknown": 9,
}

# ---------------------------------------------------------------------------------------------
# shared helpers

_T = TypeVar("_T")


def _text(text: Any) -> str:
    """Coerce any input to str: bytes decode with replacement, other types become ''."""
    if isinstance(text, str):
        return text
    if isinstance(text, (bytes, bytearray, memoryview)):
        return bytes(text).decode("utf-8", errors="replace")
    return ""


def _lines(text: Any) -> list[str]:
    """Split input into lines without NULs or CRs, each cut to a sane length."""
    s = _text(text).replace("\x00", "").replace("\r\n", "\n").replace("\r", "\n")
    return [ln[:_MAX_LINE] for ln in s.split("\n")]


def _safe(empty: Callable[[str], _T]) -> Callable[[Callable[..., _T]], Callable[..., _T]]:
    """Decorator: a parser that crashes returns `empty(problem)` instead of raising."""

    def wrap(fn: Callable[..., _T]) -> Callable[..., _T]:
        @functools.wraps(fn)
        def inner(*args: Any, **kwargs: Any) -> _T:
            try:
                return fn(*args, **kwargs)
            except Exception as exc:  # pragma: no cover - last line of defence
                return empty(f"{fn.__name__}: internal parser error {type(exc).__name__}: {exc}")

        return inner

    return wrap


_INT_RE = re.compile(r"^[-+]?\d{1,18}$")
_FLOAT_RE = re.compile(r"^[-+]?\d{1,12}(?:\.\d{1,12})?$")
_IPV4_RE = re.compile(r"^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$")


def _to_int(value: str | None) -> int | None:
    if value is None:
        return None
    v = value.strip()
    return int(v) if _INT_RE.match(v) else None


def _to_float(value: str | None) -> float | None:
    if value is None:
        return None
    v = value.strip()
    return float(v) if _FLOAT_RE.match(v) else None


def _is_ipv4(value: str) -> bool:
    m = _IPV4_RE.match(value)
    return bool(m) and all(int(g) <= 255 for g in m.groups())


def _prefix_len(mask: str | None) -> int | None:
    """Prefix length of a dotted netmask (None if not a contiguous mask)."""
    if not mask or not _is_ipv4(mask):
        return None
    n = 0
    for part in mask.split("."):
        n = (n << 8) | int(part)
    bits = f"{n:032b}"
    if "01" in bits:
        return None
    return bits.count("1")


def _is_elision(line: str) -> bool:
    s = line.strip()
    if not s or s[0] not in ".…":
        return False
    return set(s) <= {".", " ", "…"} and (s.count(".") >= 3 or "…" in s)


# ---------------------------------------------------------------------------------------------
# splitting pasted loops into per-device chunks


@dataclass(frozen=True)
class DeviceChunk:
    """Output lines that belong to one device (device None when it cannot be determined)."""

    device: int | None
    sub: str | None  # subcommand of the command line that produced it ("link", "ip", ...)
    lines: tuple[str, ...]
    command: str = ""
    elided_before: bool = False  # a "..." elision preceded it inside its loop

    @property
    def text(self) -> str:
        return "\n".join(self.lines)


@dataclass(frozen=True)
class LoopSplit:
    """A paste of one or more hccn_tool runs (single calls or shell loops), cut per device."""

    chunks: tuple[DeviceChunk, ...]
    loop_devices: tuple[int, ...]  # devices a shell loop in the paste iterated over
    elided: bool  # the paste contains "..." elisions
    problems: tuple[str, ...] = ()

    def for_sub(self, sub: str) -> tuple[DeviceChunk, ...]:
        """Chunks produced by `sub` (chunks without a known command are included)."""
        return tuple(c for c in self.chunks if c.sub in (None, sub))

    def to_dict(self) -> dict[str, Any]:
        return _jsonable(self)


_CMD_RE = re.compile(r"hccn_tool\s+(?:-i\s+(\S+)\s+)?((?:-\S+\s*)+)")
_SUB_RE = re.compile(r"-([A-Za-z_]+)")
_BRACE_RANGE_RE = re.compile(r"\{\s*(\d{1,3})\s*\.\.\s*(\d{1,3})\s*\}")
_SEQ_RE = re.compile(r"\bseq\s+(\d{1,3})(?:\s+(\d{1,3}))?")
_IN_LIST_RE = re.compile(r"\bfor\s+\w+\s+in\s+((?:\d{1,3}\s+)+\d{1,3})\s*;")
_PROMPT_RE = re.compile(r"^\s*(?:\S*[$#]\s+)?")
_MARKER_RE = re.compile(
    r"^\s*(?:\[(?:devid|device)\s+(\d{1,4})\]|dev_id\s*:\s*(\d{1,4})\b"
    r"|device\s+(\d{1,4})\s+PING\b)"
)
# a line that begins one device's output, per subcommand (for loops without device markers)
_RECORD_START: dict[str, re.Pattern[str]] = {
    "link": re.compile(r"^\s*(?:vnic\s+)?link status\s*:", re.IGNORECASE),
    "vnic": re.compile(r"^\s*vnic link status\s*:", re.IGNORECASE),
    "net_health": re.compile(r"^\s*net health status\s*:", re.IGNORECASE),
    "ip": re.compile(r"^\s*(?:ipaddr|ipv6_address)\s*:", re.IGNORECASE),
    "gateway": re.compile(r"^\s*default gateway\s*:", re.IGNORECASE),
    "netdetect": re.compile(r"^\s*netdetect\s+addr(?:ess)?\s*:", re.IGNORECASE),
    "optical": re.compile(r"^\s*optical info\s*:", re.IGNORECASE),
    "stat": re.compile(r"^\s*packet statistics\s*:", re.IGNORECASE),
    "fec": re.compile(r"^\s*fec mode\s*:", re.IGNORECASE),
    "lldp": re.compile(r"^\s*Chassis ID TLV\s*$"),
    "link_stat": re.compile(r"^\s*(?:\[(?:devid|device)\s+\d+\])?current time\s*:"),
}
_IFNAME_RE = re.compile(r"^\s*Ifname\s*:", re.IGNORECASE)


def _is_command(line: str) -> bool:
    return "hccn_tool" in line and not line.lstrip().startswith(("hccn_tool:", "bash:"))


def _loop_range(line: str) -> tuple[int, ...]:
    """Devices a `for i in {a..b}` / `seq a b` / `in 0 1 2` loop iterates over."""
    m = _BRACE_RANGE_RE.search(line)
    if m:
        a, b = int(m.group(1)), int(m.group(2))
        return tuple(range(a, b + 1)) if a <= b else ()
    m = _SEQ_RE.search(line)
    if m:
        if m.group(2) is None:  # `seq N` counts from 1
            a, b = 1, int(m.group(1))
        else:
            a, b = int(m.group(1)), int(m.group(2))
        return tuple(range(a, b + 1)) if a <= b else ()
    m = _IN_LIST_RE.search(line)
    if m:
        return tuple(int(x) for x in m.group(1).split())
    return ()


def _parse_command(line: str) -> tuple[int | None, str | None, bool, tuple[int, ...]]:
    """(explicit device, subcommand, is_loop, loop devices) of an hccn_tool command line."""
    body = line.split(" #", 1)[0] if " #" in line else line
    m = _CMD_RE.search(body)
    device: int | None = None
    sub: str | None = None
    dev_token = ""
    if m:
        dev_token = m.group(1) or ""
        device = _to_int(dev_token)
        for opt in _SUB_RE.findall(m.group(2)):
            if opt not in ("g", "s", "i", "inet6"):
                sub = opt
                break
    loop = _loop_range(body)
    is_loop = bool(loop) or dev_token.startswith("$")
    if is_loop:
        device = None
    return device, sub, is_loop, loop


def _marker(line: str) -> int | None:
    m = _MARKER_RE.match(line)
    if not m:
        return None
    return int(m.group(1) or m.group(2) or m.group(3))


def _record_start_re(sub: str | None, body: list[str]) -> re.Pattern[str] | None:
    if sub == "lldp" or sub is None:
        if any(_RECORD_START["lldp"].match(ln) for ln in body):
            return _RECORD_START["lldp"]
        if any(_IFNAME_RE.match(ln) for ln in body):
            return _IFNAME_RE
    if sub is not None:
        return _RECORD_START.get(sub)
    for name, rx in _RECORD_START.items():
        if name != "lldp" and any(rx.match(ln) for ln in body):
            return rx
    return None


def _split_section(
    body: list[str],
    cmd: str,
    device: int | None,
    sub: str | None,
    is_loop: bool,
    loop: tuple[int, ...],
    probs: _Problems,
) -> list[DeviceChunk]:
    """Cut the output of one command (or loop) into device chunks."""
    if not is_loop and device is not None:
        kept = [ln for ln in body if ln.strip()]
        for ln in kept:
            mk = _marker(ln)
            if mk is not None and mk != device:
                probs.add(f"output of `-i {device}` carries a marker for device {mk}")
                break
        return [DeviceChunk(device, sub, tuple(kept), cmd)]

    # 1. explicit device markers ([devid N], dev_id:N, device N PING)
    if any(_marker(ln) is not None for ln in body):
        chunks: list[DeviceChunk] = []
        cur_dev: int | None = None
        cur: list[str] = []
        started = False
        elided = False
        pending_elision = False
        for ln in body:
            if not ln.strip():
                continue
            if _is_elision(ln):
                elided = pending_elision = True
                continue
            mk = _marker(ln)
            if mk is not None and (not started or mk != cur_dev):
                if started and cur:
                    chunks.append(DeviceChunk(cur_dev, sub, tuple(cur), cmd, elided))
                cur_dev, cur, started = mk, [], True
                elided, pending_elision = pending_elision, False
            cur.append(ln)
        if cur:
            chunks.append(DeviceChunk(cur_dev, sub, tuple(cur), cmd, elided))
        if loop:
            seen = {c.device for c in chunks}
            absent = [d for d in loop if d not in seen]
            if absent:
                why = "elided or no output" if pending_elision or elided else "no output"
                probs.add(
                    f"loop over {len(loop)} devices: devices "
                    f"{', '.join(str(d) for d in absent)} missing ({why})"
                )
        return chunks

    # 2. count records by their first line
    rx = _record_start_re(sub, body)
    if rx is None:
        kept = [ln for ln in body if ln.strip() and not _is_elision(ln)]
        if not kept:
            return []
        return [DeviceChunk(None, sub, tuple(kept), cmd)]
    segments: list[list[list[str]]] = [[]]  # records, split into groups by "..." elisions
    cur_rec: list[str] | None = None
    for ln in body:
        if not ln.strip():
            continue
        if _is_elision(ln):
            if cur_rec is not None and rx is not _RECORD_START["lldp"]:
                cur_rec = None
            segments.append([])
            continue
        if rx.match(ln) or _ERROR_RE.search(ln):
            cur_rec = [ln]
            segments[-1].append(cur_rec)
        elif cur_rec is not None:
            cur_rec.append(ln)
        else:
            cur_rec = [ln]
            segments[-1].append(cur_rec)
    segments = [s for s in segments if s] or [[]]
    records = [r for s in segments for r in s]
    n = len(records)
    devs: list[int | None] = [None] * n
    flags = [False] * n
    if loop:
        head = segments[0]
        tail = [r for s in segments[1:] for r in s]
        if len(segments) > 2:
            probs.add("loop output has several '...' elisions; devices inside them are unknown")
            tail = segments[-1]
        if n > len(loop):
            probs.add(f"loop over {len(loop)} devices printed {n} records")
        for i in range(min(len(head), len(loop))):
            devs[i] = loop[i]
        if len(segments) > 1:
            start = n - len(tail)
            for j in range(len(tail)):
                k = len(loop) - len(tail) + j
                if 0 <= k < len(loop) and k >= len(head):
                    devs[start + j] = loop[k]
                flags[start + j] = j == 0
            elided_count = len(loop) - len(head) - len(tail)
            if elided_count > 0:
                probs.add(f"devices elided with '...': {elided_count} of {len(loop)}")
        elif n < len(loop):
            probs.add(
                f"loop over {len(loop)} devices printed {n} records: devices "
                f"{', '.join(str(d) for d in loop[n:])} have no output"
            )
    elif is_loop and n > 1:
        probs.add("loop range unknown: records are not attributed to devices")
    elif n == 1 and device is not None:
        devs[0] = device
    return [DeviceChunk(devs[i], sub, tuple(records[i]), cmd, flags[i]) for i in range(n)]


def _split(text: Any, sub: str | None, probs: _Problems) -> LoopSplit:
    lines = _lines(text)
    sections: list[tuple[str, int | None, str | None, bool, tuple[int, ...], list[str]]] = []
    cur: list[str] = []
    header: tuple[str, int | None, str | None, bool, tuple[int, ...]] = ("", None, None, False, ())
    loops: list[int] = []
    for ln in lines:
        if _is_command(ln):
            sections.append((*header, cur))
            dev, csub, is_loop, loop = _parse_command(ln)
            header = (ln.strip(), dev, csub, is_loop, loop)
            loops.extend(d for d in loop if d not in loops)
            cur = []
        elif not ln.lstrip().startswith(("#", "$ ")):  # shell comments, other prompts
            cur.append(ln)
    sections.append((*header, cur))
    chunks: list[DeviceChunk] = []
    for cmd, dev, csub, is_loop, loop, body in sections:
        if not cmd and not any(ln.strip() for ln in body):
            continue
        eff = csub if csub is not None else sub
        if sub is not None and csub is not None and csub != sub:
            # another subcommand in the same paste: keep it as one chunk, do not interpret
            chunks.append(DeviceChunk(dev, csub, tuple(ln for ln in body if ln.strip()), cmd))
            continue
        chunks.extend(_split_section(body, cmd, dev, eff, is_loop, loop, probs))
    elided = any(_is_elision(ln) for ln in lines)
    return LoopSplit(tuple(chunks), tuple(loops), elided, probs.result())


@_safe(lambda p: LoopSplit((), (), False, (p,)))
def split_loop_output(text: str | bytes, sub: str | None = None) -> LoopSplit:
    """Cut pasted hccn_tool output (single calls, `for i in {0..7}` loops) into device chunks."""
    return _split(text, sub, _Problems())


def _chunks_for(text: Any, sub: str, probs: _Problems) -> list[DeviceChunk]:
    split = _split(text, sub, probs)
    out = []
    for c in split.chunks:
        if c.sub in (None, sub) or (sub == "link" and c.sub == "vnic"):
            out.append(c)
    return out


def _kv(line: str) -> tuple[str, str] | None:
    """`key : value` / `key:value` → (key, value) with padding removed."""
    if ":" not in line:
        return None
    k, _, v = line.partition(":")
    return k.strip(), v.strip()


def _error_of(lines: Iterable[str]) -> str | None:
    for ln in lines:
        if _ERROR_RE.search(ln):
            return ln.strip()
    return None


def _dups(devices: Iterable[int | None], probs: _Problems, what: str) -> None:
    seen: set[int] = set()
    for d in devices:
        if d is None:
            continue
        if d in seen:
            probs.add(f"{what}: device {d} appears more than once; the last value wins")
        seen.add(d)


# ---------------------------------------------------------------------------------------------
# -link -g


@dataclass(frozen=True)
class DeviceLink:
    """`link status: UP|DOWN` of one device (status None when not printed)."""

    device: int | None
    status: str | None  # "UP" | "DOWN" | other text as printed, upper-cased
    vnic: bool = False  # from `-vnic -g` (A3 in-pod virtual NIC)
    error: str | None = None

    @property
    def up(self) -> bool:
        return self.status == "UP"


@dataclass(frozen=True)
class LinkFacts:
    """Link state per device."""

    devices: tuple[DeviceLink, ...]
    problems: tuple[str, ...] = ()

    @property
    def down(self) -> tuple[DeviceLink, ...]:
        return tuple(d for d in self.devices if not d.up)

    def to_dict(self) -> dict[str, Any]:
        return _jsonable(self)


_LINK_RE = re.compile(r"^\s*(vnic\s+)?link status\s*:\s*(\S+)", re.IGNORECASE)


@_safe(lambda p: LinkFacts((), (p,)))
def parse_link(text: str | bytes) -> LinkFacts:
    """Parse `hccn_tool -i N -link -g` (or `-vnic -g`) output, single or looped."""
    probs = _Problems()
    out: list[DeviceLink] = []
    for c in _chunks_for(text, "link", probs):
        status: str | None = None
        vnic = False
        for ln in c.lines:
            m = _LINK_RE.match(ln)
            if m:
                status, vnic = m.group(2).upper(), bool(m.group(1))
                break
        err = _error_of(c.lines)
        if status is None and err is None and not c.lines:
            err = "no output"
        if status is None:
            probs.add(f"device {c.device}: no `link status:` line")
        elif status not in ("UP", "DOWN"):
            probs.add(f"device {c.device}: unexpected link status {status!r}")
        out.append(DeviceLink(c.device, status, vnic, err))
    _dups((d.device for d in out), probs, "link")
    return LinkFacts(tuple(out), probs.result())


# ---------------------------------------------------------------------------------------------
# -net_health -g


@dataclass(frozen=True)
class DeviceNetHealth:
    """`net health status: <state>` of one device."""

    device: int | None
    state: str | None  # canonical text from NET_HEALTH_CODES, or the raw text if unknown
    raw: str | None
    code: int | None
    level: str  # "ok" (Success), "warn" (Init), "fail" (anything else), "unknown" (no data)
    error: str | None = None


@dataclass(frozen=True)
class NetHealthFacts:
    """Network health per device."""

    devices: tuple[DeviceNetHealth, ...]
    problems: tuple[str, ...] = ()

    @property
    def not_success(self) -> tuple[DeviceNetHealth, ...]:
        return tuple(d for d in self.devices if d.level != "ok")

    def to_dict(self) -> dict[str, Any]:
        return _jsonable(self)


_NET_HEALTH_RE = re.compile(r"^\s*net health status\s*:\s*(.*?)\s*$", re.IGNORECASE)


def _net_health_state(raw: str) -> tuple[str, int | None]:
    low = raw.lower()
    for name, code in NET_HEALTH_CODES.items():
        # prefix match: FaultDiag prints "Socket failed", the tool source "Socket fail"
        if low.startswith(name.lower()):
            return name, code
    return raw, None


@_safe(lambda p: NetHealthFacts((), (p,)))
def parse_net_health(text: str | bytes) -> NetHealthFacts:
    """Parse `hccn_tool -i N -net_health -g` output, single or looped."""
    probs = _Problems()
    out: list[DeviceNetHealth] = []
    for c in _chunks_for(text, "net_health", probs):
        raw: str | None = None
        for ln in c.lines:
            m = _NET_HEALTH_RE.match(ln)
            if m:
                raw = m.group(1)
                break
        err = _error_of(c.lines)
        if raw is None:
            probs.add(f"device {c.device}: no `net health status:` line")
            out.append(DeviceNetHealth(c.device, None, None, None, "unknown", err))
            continue
        state, code = _net_health_state(raw)
        if code is None:
            probs.add(f"device {c.device}: unknown net health state {raw!r}")
        level = "ok" if code == 0 else "warn" if code == 6 else "fail"
        out.append(DeviceNetHealth(c.device, state, raw, code, level, err))
    _dups((d.device for d in out), probs, "net_health")
    return NetHealthFacts(tuple(out), probs.result())


# ---------------------------------------------------------------------------------------------
# -ip -g


@dataclass(frozen=True)
class IpAddress:
    """One address of a device port: IPv4 with netmask, or IPv6 with prefix length."""

    address: str
    netmask: str | None = None
    prefix_len: int | None = None
    family: str = "ipv4"


@dataclass(frozen=True)
class DeviceIp:
    """Addresses of one device (empty when none is configured)."""

    device: int | None
    addresses: tuple[IpAddress, ...]
    error: str | None = None

    @property
    def ipaddr(self) -> str | None:
        return self.addresses[0].address if self.addresses else None

    @property
    def netmask(self) -> str | None:
        return self.addresses[0].netmask if self.addresses else None


@dataclass(frozen=True)
class IpFacts:
    """Device RoCE addresses."""

    devices: tuple[DeviceIp, ...]
    problems: tuple[str, ...] = ()

    def by_device(self) -> dict[int, DeviceIp]:
        """Devices with a known number, keyed by it."""
        return {d.device: d for d in self.devices if d.device is not None}

    @property
    def without_ip(self) -> tuple[DeviceIp, ...]:
        return tuple(d for d in self.devices if not d.addresses)

    def to_dict(self) -> dict[str, Any]:
        return _jsonable(self)


def _ip_pairs(lines: Iterable[str], probs: _Problems, dev: int | None) -> list[IpAddress]:
    addrs: list[IpAddress] = []
    pending: str | None = None
    family = "ipv4"

    def flush(mask: str | None = None, plen: int | None = None) -> None:
        nonlocal pending
        if pending is not None:
            if family == "ipv4" and not _is_ipv4(pending):
                probs.add(f"device {dev}: ipaddr {pending!r} is not a valid IPv4 address")
            if family == "ipv4" and plen is None:
                plen = _prefix_len(mask)
                if mask is not None and plen is None:
                    probs.add(f"device {dev}: netmask {mask!r} is not a valid mask")
            addrs.append(IpAddress(pending, mask, plen, family))
            pending = None

    for ln in lines:
        kv = _kv(ln)
        if kv is None:
            continue
        k, v = kv[0].lower(), kv[1]
        if k in ("ipaddr", "ipv6_address", "vnic ipaddr"):
            flush()
            pending, family = v, "ipv6" if k == "ipv6_address" else "ipv4"
        elif k in ("netmask", "vnic netmask"):
            if pending is None:
                probs.add(f"device {dev}: netmask without ipaddr")
            else:
                flush(mask=v)
        elif k == "prefix_length" and pending is not None:
            flush(plen=_to_int(v))
    flush()
    return addrs


@_safe(lambda p: IpFacts((), (p,)))
def parse_ip(text: str | bytes) -> IpFacts:
    """Parse `hccn_tool -i N -ip -g` (and `-ip -inet6 -g`) output, single or looped."""
    probs = _Problems()
    out: list[DeviceIp] = []
    for c in _chunks_for(text, "ip", probs):
        addrs = _ip_pairs(c.lines, probs, c.device)
        err = _error_of(c.lines)
        if not addrs and err is None:
            err = "no ipaddr printed (no IP configured, or the error went to stderr)"
        out.append(DeviceIp(c.device, tuple(addrs), err))
    _dups((d.device for d in out), probs, "ip")
    return IpFacts(tuple(out), probs.result())


# ---------------------------------------------------------------------------------------------
# -gateway -g / -netdetect -g


@dataclass(frozen=True)
class DeviceGateway:
    """`default gateway:<ip>, Iface:ethN` of one device."""

    device: int | None
    gateway: str | None
    iface: str | None
    error: str | None = None


@dataclass(frozen=True)
class GatewayFacts:
    """Default gateway per device."""

    devices: tuple[DeviceGateway, ...]
    problems: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        return _jsonable(self)


_GATEWAY_RE = re.compile(
    r"^\s*default gateway\s*:\s*([^,\s]*)\s*(?:,\s*Iface\s*:\s*(\S+))?", re.IGNORECASE
)


@_safe(lambda p: GatewayFacts((), (p,)))
def parse_gateway(text: str | bytes) -> GatewayFacts:
    """Parse `hccn_tool -i N -gateway -g` output, single or looped."""
    probs = _Problems()
    out: list[DeviceGateway] = []
    for c in _chunks_for(text, "gateway", probs):
        gw = iface = None
        for ln in c.lines:
            m = _GATEWAY_RE.match(ln)
            if m:
                gw, iface = m.group(1) or None, m.group(2)
                break
        err = _error_of(c.lines)
        if gw is None and err is None:
            err = "no gateway printed"
        if gw is not None and not _is_ipv4(gw) and ":" not in gw:
            probs.add(f"device {c.device}: gateway {gw!r} is not an IP address")
        out.append(DeviceGateway(c.device, gw, iface, err))
    _dups((d.device for d in out), probs, "gateway")
    return GatewayFacts(tuple(out), probs.result())


@dataclass(frozen=True)
class DeviceNetdetect:
    """`netdetect addr: <ip>` of one device (the target of net_health)."""

    device: int | None
    address: str | None
    error: str | None = None


@dataclass(frozen=True)
class NetdetectFacts:
    """Detect IP per device."""

    devices: tuple[DeviceNetdetect, ...]
    problems: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        return _jsonable(self)


_NETDETECT_RE = re.compile(r"^\s*netdetect\s+addr(?:ess)?\s*:\s*(\S*)", re.IGNORECASE)


@_safe(lambda p: NetdetectFacts((), (p,)))
def parse_netdetect(text: str | bytes) -> NetdetectFacts:
    """Parse `hccn_tool -i N -netdetect -g` (`addr:` or pasted `address:`), single or looped."""
    probs = _Problems()
    out: list[DeviceNetdetect] = []
    for c in _chunks_for(text, "netdetect", probs):
        addr = None
        for ln in c.lines:
            m = _NETDETECT_RE.match(ln)
            if m:
                addr = m.group(1) or None
                break
        err = _error_of(c.lines)
        if addr is None and err is None:
            err = "no netdetect address printed"
        out.append(DeviceNetdetect(c.device, addr, err))
    _dups((d.device for d in out), probs, "netdetect")
    return NetdetectFacts(tuple(out), probs.result())


# ---------------------------------------------------------------------------------------------
# -optical -g


@dataclass(frozen=True)
class OpticalModule:
    """One transceiver: presence, per-lane power, thresholds, LOS/LoL flags, alarms."""

    device: int | None
    present: bool | None
    fields: tuple[tuple[str, str], ...]  # every `label : value` line, in order
    temperature_c: float | None
    vcc_mv: float | None
    tx_power_mw: tuple[float | None, ...]  # per lane (one entry for single-value layouts)
    rx_power_mw: tuple[float | None, ...]
    tx_power_thresholds: tuple[float | None, float | None]  # (low, high)
    rx_power_thresholds: tuple[float | None, float | None]
    temp_thresholds: tuple[float | None, float | None]
    tx_los: int | None
    rx_los: int | None
    tx_lol: int | None
    rx_lol: int | None
    vendor: str | None
    part_number: str | None
    alarms: tuple[str, ...]  # readiness findings (not present, power out of range, LOS/LoL)

    def field(self, label: str) -> str | None:
        """Value of a label (case-insensitive, spaces collapsed), last one wins."""
        want = " ".join(label.lower().split())
        found = None
        for k, v in self.fields:
            if " ".join(k.lower().split()) == want:
                found = v
        return found


@dataclass(frozen=True)
class OpticalFacts:
    """Optical modules per device."""

    devices: tuple[OpticalModule, ...]
    problems: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        return _jsonable(self)


_NUM_UNIT_RE = re.compile(r"^\s*([-+]?\d{1,12}(?:\.\d{1,12})?)\s*[A-Za-z]*\s*$")
_FLAG_RE = re.compile(r"^\s*0x([0-9a-fA-F]{1,8})\s*$")
_FLAG_LABELS = {"tx los": "Tx LOS", "rx los": "Rx LOS", "tx lol": "Tx LoL", "rx lol": "Rx LoL"}
_LANE_RE = re.compile(r"^(tx power|rx power|tx bias)\s*(\d?)$")


def _num(value: str | None) -> float | None:
    if value is None or value.strip() in _NA:
        return None
    m = _NUM_UNIT_RE.match(value)
    return float(m.group(1)) if m else None


def _flag(value: str | None) -> int | None:
    if value is None:
        return None
    m = _FLAG_RE.match(value)
    return int(m.group(1), 16) if m else None


def _optical_module(c: DeviceChunk, probs: _Problems) -> OpticalModule:
    fields: list[tuple[str, str]] = []
    for ln in c.lines:
        if _is_elision(ln) or ln.strip().lower().startswith("optical info"):
            continue
        kv = _kv(ln)
        if kv and kv[0]:
            fields.append(kv)
    d: dict[str, str] = {}
    lanes: dict[str, dict[int, str]] = {"tx power": {}, "rx power": {}}
    numbered = {"tx power": False, "rx power": False}
    for k, v in fields:
        key = " ".join(k.lower().split())
        d[key] = v
        m = _LANE_RE.match(key)
        if m and m.group(1) in lanes:
            lanes[m.group(1)][int(m.group(2) or 0)] = v
            numbered[m.group(1)] = numbered[m.group(1)] or bool(m.group(2))

    def lane_vals(name: str) -> tuple[float | None, ...]:
        vals = lanes[name]
        if not vals:
            return ()
        return tuple(_num(vals.get(i)) for i in range(max(vals) + 1))

    present_raw = d.get("present")
    present: bool | None = None
    if present_raw is not None:
        pr = present_raw.strip().lower()
        present = False if pr.startswith("not") else True if pr == "present" else None
        if present is None:
            probs.add(f"device {c.device}: unexpected `present` value {present_raw!r}")
    tx = lane_vals("tx power")
    rx = lane_vals("rx power")
    tx_thr = (_num(d.get("txpower low thres")), _num(d.get("txpower high thres")))
    rx_thr = (_num(d.get("rxpower low thres")), _num(d.get("rxpower high thres")))
    t_thr = (_num(d.get("temp low thres")), _num(d.get("temp high thres")))
    temp = _num(d.get("temperature"))
    flags = {n: _flag(d.get(f"{n} flag")) for n in ("tx los", "rx los", "tx lol", "rx lol")}
    for n in flags:
        raw = d.get(f"{n} flag")
        if raw is not None and flags[n] is None and raw.strip() not in _NA:
            probs.add(f"device {c.device}: unreadable {n} flag {raw!r}")

    alarms: list[str] = []
    if present is False:
        alarms.append("optical module not present")
    for label, vals, (lo, hi) in (("Tx Power", tx, tx_thr), ("Rx Power", rx, rx_thr)):
        for i, v in enumerate(vals):
            if v is None:
                continue
            lane = f"{label}{i}" if numbered[label.lower()] else label
            if lo is not None and v < lo:
                alarms.append(f"{lane} {v} mW below low threshold {lo} mW")
            if hi is not None and v > hi:
                alarms.append(f"{lane} {v} mW above high threshold {hi} mW")
    if temp is not None and t_thr[1] is not None and temp > t_thr[1]:
        alarms.append(f"temperature {temp} C above high threshold {t_thr[1]} C")
    for n, val in flags.items():
        if val:
            label = _FLAG_LABELS[n]
            what = "loss of signal" if "LOS" in label else "loss of lock"
            alarms.append(f"{label} flag 0x{val:x} ({what})")
    if not fields:
        err = _error_of(c.lines)
        alarms.append(f"no optical data ({err})" if err else "no optical data")
    return OpticalModule(
        device=c.device,
        present=present,
        fields=tuple(fields),
        temperature_c=temp,
        vcc_mv=_num(d.get("vcc")),
        tx_power_mw=tx,
        rx_power_mw=rx,
        tx_power_thresholds=tx_thr,
        rx_power_thresholds=rx_thr,
        temp_thresholds=t_thr,
        tx_los=flags["tx los"],
        rx_los=flags["rx los"],
        tx_lol=flags["tx lol"],
        rx_lol=flags["rx lol"],
        vendor=d.get("vendor name"),
        part_number=d.get("vendor part number"),
        alarms=tuple(alarms),
    )


@_safe(lambda p: OpticalFacts((), (p,)))
def parse_optical(text: str | bytes) -> OpticalFacts:
    """Parse `hccn_tool -i N -optical -g`: presence, lane powers vs thresholds, LOS/LoL."""
    probs = _Problems()
    out = [_optical_module(c, probs) for c in _chunks_for(text, "optical", probs)]
    _dups((d.device for d in out), probs, "optical")
    return OpticalFacts(tuple(out), probs.result())


# ---------------------------------------------------------------------------------------------
# -link_stat -g


@dataclass(frozen=True)
class LinkRecord:
    """One link change record (newest first in the tool's output)."""

    time: str
    when: datetime | None
    state: str  # "UP" | "DOWN"


@dataclass(frozen=True)
class DeviceLinkStat:
    """Link flap history of one device."""

    device: int | None
    current_time: str | None
    now: datetime | None
    link_up_count: int | None
    link_down_count: int | None
    records: tuple[LinkRecord, ...]  # newest first, as printed

    @property
    def last_state(self) -> str | None:
        """State of the newest record (None when there are no records)."""
        return self.records[0].state if self.records else None

    @property
    def down_records(self) -> int:
        return sum(1 for r in self.records if r.state == "DOWN")

    def downs_within(self, seconds: float) -> int:
        """DOWN records newer than `seconds` before the device's current time."""
        if self.now is None:
            return 0
        n = 0
        for r in self.records:
            if r.state == "DOWN" and r.when is not None:
                age = (self.now - r.when).total_seconds()
                if -60 <= age <= seconds:
                    n += 1
        return n


@dataclass(frozen=True)
class LinkStatFacts:
    """Link statistics per device."""

    devices: tuple[DeviceLinkStat, ...]
    problems: tuple[str, ...] = ()

    @property
    def ending_down(self) -> tuple[DeviceLinkStat, ...]:
        return tuple(d for d in self.devices if d.last_state == "DOWN")

    def to_dict(self) -> dict[str, Any]:
        return _jsonable(self)


_LS_PREFIX_RE = re.compile(r"^\s*\[(?:devid|device)\s+(\d{1,4})\]")
_LS_RECORD_RE = re.compile(
    r"^\s*(\w{3}\s+\w{3}\s+\d{1,2}\s+\d{1,2}:\d{2}:\d{2}\s+\d{4})\s+LINK\s+(\w+)"
)


def _asctime(text: str) -> datetime | None:
    try:
        return datetime.strptime(" ".join(text.split()), "%a %b %d %H:%M:%S %Y")
    except ValueError:
        return None


def _link_stat_device(c: DeviceChunk, probs: _Problems) -> DeviceLinkStat:
    cur_time = None
    up = down = None
    records: list[LinkRecord] = []
    dev = c.device
    for ln in c.lines:
        m = _LS_PREFIX_RE.match(ln)
        body = ln[m.end() :] if m else ln
        if m and dev is None:
            dev = int(m.group(1))
        r = _LS_RECORD_RE.match(body)
        if r:
            state = r.group(2).upper()
            if state not in ("UP", "DOWN"):
                probs.add(f"device {dev}: unknown link record state {state!r}")
            when = _asctime(r.group(1))
            if when is None:
                probs.add(f"device {dev}: unreadable record time {r.group(1)!r}")
            records.append(LinkRecord(" ".join(r.group(1).split()), when, state))
            continue
        kv = _kv(body)
        if kv is None:
            continue
        k = " ".join(kv[0].lower().split())
        if k == "current time":
            cur_time = kv[1]
        elif k == "link up count":
            up = _to_int(kv[1])
        elif k == "link down count":
            down = _to_int(kv[1])
    now = _asctime(cur_time) if cur_time else None
    if cur_time is None and not records:
        probs.add(f"device {dev}: no link_stat data")
    prev: datetime | None = None
    for rec in records:
        if rec.when is not None and prev is not None and rec.when > prev:
            probs.add(f"device {dev}: link records are not newest-first")
            break
        prev = rec.when if rec.when is not None else prev
    return DeviceLinkStat(dev, cur_time, now, up, down, tuple(records))


@_safe(lambda p: LinkStatFacts((), (p,)))
def parse_link_stat(text: str | bytes) -> LinkStatFacts:
    """Parse `hccn_tool -i N -link_stat -g`: counts and newest-first LINK UP/DOWN records."""
    probs = _Problems()
    out = [_link_stat_device(c, probs) for c in _chunks_for(text, "link_stat", probs)]
    _dups((d.device for d in out), probs, "link_stat")
    return LinkStatFacts(tuple(out), probs.result())


# ---------------------------------------------------------------------------------------------
# -lldp -g


@dataclass(frozen=True)
class LldpNeighbour:
    """The switch (or peer NPU) a device port sees over LLDP."""

    device: int | None
    tlvs: tuple[tuple[str, tuple[str, ...]], ...]  # (TLV name, value lines)
    chassis_id: str | None
    port_id: str | None
    port_ifname: str | None
    system_name: str | None
    system_description: str | None
    capabilities: str | None
    management_address: str | None
    max_frame_size: int | None
    kind: str | None  # "route" (switched), "fiber" (NPU back-to-back), None

    def tlv(self, name: str) -> tuple[str, ...]:
        """Value lines of a TLV (empty when absent)."""
        for n, vals in self.tlvs:
            if n.lower() == name.lower():
                return vals
        return ()


@dataclass(frozen=True)
class LldpFacts:
    """LLDP neighbours per device."""

    devices: tuple[LldpNeighbour, ...]
    problems: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        return _jsonable(self)


_TLV_RE = re.compile(r"^([A-Z][A-Za-z0-9 /]*?\bTLV)\s*$")


def _lldp_neighbour(c: DeviceChunk) -> LldpNeighbour:
    tlvs: list[tuple[str, list[str]]] = []
    for ln in c.lines:
        if _is_elision(ln):
            continue
        m = _TLV_RE.match(ln.rstrip())
        if m and not ln[:1].isspace():
            tlvs.append((m.group(1), []))
            continue
        if not tlvs:
            tlvs.append(("", []))  # value lines without a TLV name (grep'd output)
        if ln.strip():
            tlvs[-1][1].append(ln.strip())
    frozen = tuple((n, tuple(v)) for n, v in tlvs)

    def first(name: str) -> str | None:
        for n, vals in frozen:
            if n.lower() == name.lower() and vals:
                return vals[0]
        return None

    ifname = None
    for _n, vals in frozen:
        for v in vals:
            if v.lower().startswith("ifname:"):
                ifname = v.split(":", 1)[1].strip()
                break
        if ifname:
            break
    desc_lines = next((v for n, v in frozen if n.lower() == "system description tlv"), ())
    desc = "\n".join(desc_lines) if desc_lines else None
    kind = None
    if desc_lines:
        head = desc_lines[0]
        kind = "route" if "Routing" in head else "fiber" if "AscendNPU" in head else None
    mgmt = first("Management Address TLV")
    if mgmt and ":" in mgmt:
        mgmt = mgmt.split(":", 1)[1].strip()
    mfs = first("Maximum Frame Size TLV")
    chassis = first("Chassis ID TLV")
    return LldpNeighbour(
        device=c.device,
        tlvs=frozen,
        chassis_id=chassis,
        port_id=first("Port ID TLV"),
        port_ifname=ifname,
        system_name=first("System Name TLV"),
        system_description=desc,
        capabilities=first("System Capabilities TLV"),
        management_address=mgmt,
        max_frame_size=_to_int(mfs),
        kind=kind,
    )


@_safe(lambda p: LldpFacts((), (p,)))
def parse_lldp(text: str | bytes) -> LldpFacts:
    """Parse `hccn_tool -i N -lldp -g` (full TLV blocks, or `| grep Ifname` loops)."""
    probs = _Problems()
    out = [_lldp_neighbour(c) for c in _chunks_for(text, "lldp", probs)]
    _dups((d.device for d in out), probs, "lldp")
    return LldpFacts(tuple(out), probs.result())


# ---------------------------------------------------------------------------------------------
# -tls -g


@dataclass(frozen=True)
class TlsCert:
    """One certificate block of `-tls -g`."""

    name: str  # "pub cert", "ca1 cert", ...
    issuer: str | None
    start_time: str | None
    end_time: str | None


@dataclass(frozen=True)
class DeviceTls:
    """TLS switch of one device's RoCE control channel, with its certificates."""

    device: int | None
    switch: int | None  # 0 disabled, 1 enabled
    preconfigured: int | None
    alarm_days: int | None
    certs: tuple[TlsCert, ...]

    @property
    def enabled(self) -> bool | None:
        return None if self.switch is None else self.switch == 1


@dataclass(frozen=True)
class TlsFacts:
    """TLS settings per device."""

    devices: tuple[DeviceTls, ...]
    problems: tuple[str, ...] = ()

    @property
    def switches(self) -> tuple[int, ...]:
        """Distinct switch values seen, sorted."""
        return tuple(sorted({d.switch for d in self.devices if d.switch is not None}))

    @property
    def consistent(self) -> bool:
        return len(self.switches) <= 1

    def to_dict(self) -> dict[str, Any]:
        return _jsonable(self)


_TLS_SWITCH_RE = re.compile(r"tls switch\s*\[\s*(\d+)\s*\]", re.IGNORECASE)
_TLS_PRE_RE = re.compile(r"tls preconfigured\s*\[\s*(\d+)\s*\]", re.IGNORECASE)
_TLS_ALARM_RE = re.compile(r"threshold\s*\[\s*(\d+)\s*\]", re.IGNORECASE)
_TLS_CERT_RE = re.compile(r"\[([^\]]{1,40}cert)\]\s*info", re.IGNORECASE)
_BRACKET_RE = re.compile(r"^\s*(issuer|start_time|end_time|subject)\s*\[(.*)\]\s*$")


def _tls_device(c: DeviceChunk, probs: _Problems) -> DeviceTls:
    switch = pre = alarm = None
    certs: list[dict[str, str | None]] = []
    for ln in c.lines:
        m = _TLS_SWITCH_RE.search(ln)
        if m:
            switch = int(m.group(1))
            p = _TLS_PRE_RE.search(ln)
            pre = int(p.group(1)) if p else None
            a = _TLS_ALARM_RE.search(ln)
            alarm = int(a.group(1)) if a else None
            continue
        m = _TLS_CERT_RE.search(ln)
        if m:
            certs.append({"name": m.group(1), "issuer": None, "start_time": None, "end_time": None})
            continue
        b = _BRACKET_RE.match(ln)
        if b and certs and b.group(1) in certs[-1]:
            certs[-1][b.group(1)] = b.group(2)
    if switch is None:
        probs.add(f"device {c.device}: no `tls switch[...]` value")
    elif switch not in (0, 1):
        probs.add(f"device {c.device}: unexpected tls switch value {switch}")
    return DeviceTls(
        c.device,
        switch,
        pre,
        alarm,
        tuple(TlsCert(str(x["name"]), x["issuer"], x["start_time"], x["end_time"]) for x in certs),
    )


@_safe(lambda p: TlsFacts((), (p,)))
def parse_tls(text: str | bytes) -> TlsFacts:
    """Parse `hccn_tool -i N -tls -g` (full or `| grep switch`), old and new layouts."""
    probs = _Problems()
    out = [_tls_device(c, probs) for c in _chunks_for(text, "tls", probs)]
    _dups((d.device for d in out), probs, "tls")
    res = TlsFacts(tuple(out), probs.result())
    return res


# ---------------------------------------------------------------------------------------------
# -stat -g / -fec -g


@dataclass(frozen=True)
class DeviceStat:
    """Packet counters of one device."""

    device: int | None
    counters: tuple[tuple[str, int], ...]

    def counter(self, name: str) -> int | None:
        """Value of a counter (None when absent)."""
        for k, v in self.counters:
            if k == name:
                return v
        return None

    @property
    def roce_rx_err(self) -> int | None:
        return self.counter("roce_rx_err_pkt_num")

    @property
    def roce_tx_err(self) -> int | None:
        return self.counter("roce_tx_err_pkt_num")

    @property
    def error_counters(self) -> tuple[tuple[str, int], ...]:
        """Non-zero counters whose name says error or drop."""
        return tuple(
            (k, v) for k, v in self.counters if v and ("err" in k or "drop" in k or "bad" in k)
        )


@dataclass(frozen=True)
class StatFacts:
    """Packet statistics per device."""

    devices: tuple[DeviceStat, ...]
    problems: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        return _jsonable(self)


_COUNTER_RE = re.compile(r"^\s*([A-Za-z][\w.]{0,80})\s*:\s*(\d{1,20})\s*$")


@_safe(lambda p: StatFacts((), (p,)))
def parse_stat(text: str | bytes) -> StatFacts:
    """Parse `hccn_tool -i N -stat -g` counters (`name:value`)."""
    probs = _Problems()
    out: list[DeviceStat] = []
    for c in _chunks_for(text, "stat", probs):
        counters: list[tuple[str, int]] = []
        for ln in c.lines:
            m = _COUNTER_RE.match(ln)
            if m:
                counters.append((m.group(1), int(m.group(2))))
            elif ln.strip() and not _is_elision(ln) and "statistics" not in ln.lower():
                probs.add(f"device {c.device}: unreadable counter line {ln.strip()[:80]!r}")
        out.append(DeviceStat(c.device, tuple(counters)))
    _dups((d.device for d in out), probs, "stat")
    return StatFacts(tuple(out), probs.result())


@dataclass(frozen=True)
class DeviceFec:
    """FEC mode of one device port."""

    device: int | None
    mode: str | None  # "rs" | "no" | "auto" | other first word
    raw: str | None


@dataclass(frozen=True)
class FecFacts:
    """FEC mode per device."""

    devices: tuple[DeviceFec, ...]
    problems: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        return _jsonable(self)


_FEC_RE = re.compile(r"^\s*fec mode\s*:\s*(.*?)\s*$", re.IGNORECASE)


@_safe(lambda p: FecFacts((), (p,)))
def parse_fec(text: str | bytes) -> FecFacts:
    """Parse `hccn_tool -i N -fec -g` (`fec mode: rs FEC mode` / `no FEC mode` / `auto`)."""
    probs = _Problems()
    out: list[DeviceFec] = []
    for c in _chunks_for(text, "fec", probs):
        raw = None
        for ln in c.lines:
            m = _FEC_RE.match(ln)
            if m:
                raw = m.group(1)
                break
        mode = raw.split()[0].lower() if raw else None
        if raw is None:
            probs.add(f"device {c.device}: no `fec mode:` line")
        out.append(DeviceFec(c.device, mode, raw))
    _dups((d.device for d in out), probs, "fec")
    return FecFacts(tuple(out), probs.result())


# ---------------------------------------------------------------------------------------------
# -ping -g address <ip>


@dataclass(frozen=True)
class DevicePing:
    """RoCE ping from one device to one address."""

    device: int | None
    target: str | None
    transmitted: int | None
    received: int | None
    loss_pct: float | None
    rtts_ms: tuple[float, ...]
    failures: tuple[str, ...]  # timeout / unreachable lines

    @property
    def ok(self) -> bool:
        return bool(self.transmitted) and self.received == self.transmitted


@dataclass(frozen=True)
class PingFacts:
    """Ping results per device."""

    devices: tuple[DevicePing, ...]
    problems: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        return _jsonable(self)


_PING_HEAD_RE = re.compile(r"^\s*device\s+(\d{1,4})\s+PING\s+(\S+)")
_PING_SEQ_RE = re.compile(r"recv seq\s*=?\s*\d+\s*,\s*time\s*=\s*([\d.]+)\s*(ms|us)")
_PING_SUM_RE = re.compile(
    r"(\d+)\s+packets? transmitted,\s*(\d+)\s+received,\s*([\d.]+)%\s+packets?\s+loss"
)
_PING_FAIL_RE = re.compile(r"recv time out|Destination Host Unreachable|Message too long", re.I)


@_safe(lambda p: PingFacts((), (p,)))
def parse_ping(text: str | bytes) -> PingFacts:
    """Parse `hccn_tool -i N -ping -g address <ip>` output, single or looped."""
    probs = _Problems()
    out: list[DevicePing] = []
    for c in _chunks_for(text, "ping", probs):
        target = tx = rx = loss = None
        rtts: list[float] = []
        fails: list[str] = []
        dev = c.device
        for ln in c.lines:
            m = _PING_HEAD_RE.match(ln)
            if m:
                dev = int(m.group(1)) if dev is None else dev
                target = m.group(2)
                continue
            m = _PING_SEQ_RE.search(ln)
            if m:
                v = _to_float(m.group(1))
                if v is not None:
                    rtts.append(v / 1000 if m.group(2) == "us" else v)
                continue
            m = _PING_SUM_RE.search(ln)
            if m:
                tx, rx, loss = int(m.group(1)), int(m.group(2)), _to_float(m.group(3))
                continue
            if _PING_FAIL_RE.search(ln) or _ERROR_RE.search(ln):
                fails.append(ln.strip())
        if tx is None:
            probs.add(f"device {dev}: no ping summary line")
        out.append(DevicePing(dev, target, tx, rx, loss, tuple(rtts), tuple(fails)))
    return PingFacts(tuple(out), probs.result())


# ---------------------------------------------------------------------------------------------
# /etc/hccn.conf


@dataclass(frozen=True)
class HccnConfDevice:
    """Persistent RoCE settings of one device from /etc/hccn.conf."""

    device: int
    address: str | None = None
    netmask: str | None = None
    netdetect: str | None = None
    gateway: str | None = None
    send_arp_status: str | None = None
    tls_enable: str | None = None
    other: tuple[tuple[str, str], ...] = ()  # other `<key>_N` settings, e.g. xsfp_reset_*

    def get(self, key: str) -> str | None:
        """Any setting of this device by its key without the `_N` suffix."""
        if key in _CONF_KNOWN:
            return getattr(self, key)
        for k, v in self.other:
            if k == key:
                return v
        return None


@dataclass(frozen=True)
class HccnConf:
    """/etc/hccn.conf: per-device settings (sorted by device) and keys without a device."""

    devices: tuple[HccnConfDevice, ...]
    global_keys: tuple[tuple[str, str], ...] = ()
    elided: bool = False
    problems: tuple[str, ...] = ()

    def device(self, n: int) -> HccnConfDevice | None:
        """Settings of device n (None when the file does not mention it)."""
        for d in self.devices:
            if d.device == n:
                return d
        return None

    def addresses(self) -> dict[int, str]:
        """address_N of every device that has one."""
        return {d.device: d.address for d in self.devices if d.address}

    def to_dict(self) -> dict[str, Any]:
        return _jsonable(self)


_CONF_KNOWN = ("address", "netmask", "netdetect", "gateway", "send_arp_status", "tls_enable")
_CONF_RE = re.compile(r"^\s*([A-Za-z][A-Za-z0-9_]{0,80}?)_(\d{1,4})\s*=\s*(.*?)\s*$")
_CONF_GLOBAL_RE = re.compile(r"^\s*([A-Za-z][A-Za-z0-9_.]{0,80})\s*=\s*(.*?)\s*$")


@_safe(lambda p: HccnConf((), (), False, (p,)))
def parse_hccn_conf(text: str | bytes) -> HccnConf:
    """Parse /etc/hccn.conf (`address_0=...`, `netmask_0=...`, any order, unknown keys kept)."""
    probs = _Problems()
    per: dict[int, dict[str, str]] = {}
    other: dict[int, dict[str, str]] = {}
    glob: list[tuple[str, str]] = []
    elided = False
    for i, ln in enumerate(_lines(text), 1):
        s = ln.strip()
        if not s or s.startswith("#") or s.startswith("$ ") or s.startswith("cat "):
            continue
        if _is_elision(s):
            elided = True
            continue
        m = _CONF_RE.match(s)
        if m:
            key, dev, val = m.group(1), int(m.group(2)), m.group(3)
            bucket = per if key in _CONF_KNOWN else other
            slot = bucket.setdefault(dev, {})
            if key in slot and slot[key] != val:
                probs.add(f"line {i}: {key}_{dev} set twice ({slot[key]!r}, then {val!r})")
            slot[key] = val
            is_addr = key in ("address", "netmask", "netdetect", "gateway")
            if is_addr and not _is_ipv4(val) and ":" not in val:
                probs.add(f"line {i}: {key}_{dev}={val!r} is not an IP address")
            continue
        g = _CONF_GLOBAL_RE.match(s)
        if g:
            glob.append((g.group(1), g.group(2)))
            continue
        probs.add(f"line {i}: not a key=value line: {s[:80]!r}")
    devices = []
    for dev in sorted(set(per) | set(other)):
        known = per.get(dev, {})
        devices.append(
            HccnConfDevice(
                dev,
                *(known.get(k) for k in _CONF_KNOWN),
                other=tuple(sorted(other.get(dev, {}).items())),
            )
        )
    for d in devices:
        if d.address and not d.netmask:
            probs.add(f"device {d.device}: address without netmask")
    return HccnConf(tuple(devices), tuple(glob), elided, probs.result())


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
        return _jsonable(self)


_HT_IP_RE = re.compile(r"device_id:\s*(\d{1,4}),\s*device_ip_info:\s*\[(.*)\]")
_HT_SDID_RE = re.compile(r"device_id:\s*(\d{1,4}),\s*super_device_id:\s*\[(.*)\]")
_HT_ITEM_RE = re.compile(r"'((?:[^'\\]|\\.)*)'")
_HT_HW_RE = re.compile(r"hardware_type:\s*(\S+)")
_HT_VIS_RE = re.compile(r"visible_devices:\s*\[(.*)\]")


@_safe(lambda p: HcclToolsLog((), None, (), (p,)))
def parse_hccl_tools_log(text: str | bytes) -> HcclToolsLog:
    """Parse hccl_tools.py log lines carrying `hccn_tool -ip -g` and spod-info per device."""
    probs = _Problems()
    data: dict[int, dict[str, Any]] = {}
    hw = None
    visible: tuple[str, ...] = ()
    for ln in _lines(text):
        m = _HT_IP_RE.search(ln)
        if m:
            items = [i.replace("\\n", "\n").replace("\\t", "\t") for i in _HT_ITEM_RE.findall(ln)]
            addrs = _ip_pairs("\n".join(items).split("\n"), probs, int(m.group(1)))
            slot = data.setdefault(int(m.group(1)), {})
            if addrs:
                slot["ipaddr"], slot["netmask"] = addrs[0].address, addrs[0].netmask
            continue
        m = _HT_SDID_RE.search(ln)
        if m:
            slot = data.setdefault(int(m.group(1)), {})
            for item in _HT_ITEM_RE.findall(m.group(2)):
                kv = _kv(item.replace("\\n", "").replace("\\t", ""))
                if kv:
                    slot[" ".join(kv[0].lower().split())] = _to_int(kv[1])
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
