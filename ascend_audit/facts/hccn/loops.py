"""Splitting pasted `for i in {0..7}; do hccn_tool -i $i ...; done` output into device chunks."""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from ascend_audit.facts.common import Problems, split_lines, to_int, to_jsonable
from ascend_audit.facts.hccn.base import ERROR_RE, is_elision, never_raises

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

    def to_dict(self) -> dict[str, Any]:
        return to_jsonable(self)


_CMD_RE = re.compile(r"hccn_tool\s+(?:-i\s+(\S+)\s+)?((?:-\S+\s*)+)")
_SUB_RE = re.compile(r"-([A-Za-z_]+)")
_BRACE_RANGE_RE = re.compile(r"\{\s*(\d{1,3})\s*\.\.\s*(\d{1,3})\s*\}")
_SEQ_RE = re.compile(r"\bseq\s+(\d{1,3})(?:\s+(\d{1,3}))?")
_IN_LIST_RE = re.compile(r"\bfor\s+\w+\s+in\s+((?:\d{1,3}\s+)+\d{1,3})\s*;")
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
        device = to_int(dev_token)
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


@dataclass(frozen=True)
class _Section:
    """The output of one pasted command (or loop of commands), and what its line says."""

    cmd: str
    device: int | None  # `-i N` of a single call
    sub: str | None
    is_loop: bool
    loop: tuple[int, ...]  # the devices the loop runs over, when its range could be read
    body: list[str]


def _split_section(sec: _Section, probs: Problems) -> list[DeviceChunk]:
    """Cut the output of one command (or loop) into device chunks, by the first rule that fits:
    a single call's output is its device's; explicit device markers; else records counted by
    their first line and matched to the loop's devices in order."""
    if not sec.is_loop and sec.device is not None:
        return _single_call(sec, probs)
    if any(_marker(ln) is not None for ln in sec.body):
        return _split_by_markers(sec, probs)
    return _split_by_records(sec, probs)


def _single_call(sec: _Section, probs: Problems) -> list[DeviceChunk]:
    """`hccn_tool -i N ...`: the whole output is device N's (a marker for another is a problem)."""
    kept = [ln for ln in sec.body if ln.strip()]
    for ln in kept:
        mk = _marker(ln)
        if mk is not None and mk != sec.device:
            probs.add(f"output of `-i {sec.device}` carries a marker for device {mk}")
            break
    return [DeviceChunk(sec.device, sec.sub, tuple(kept), sec.cmd)]


def _split_by_markers(sec: _Section, probs: Problems) -> list[DeviceChunk]:
    """Explicit device markers ([devid N], dev_id:N, device N PING) start each device's chunk."""
    chunks: list[DeviceChunk] = []
    cur_dev: int | None = None
    cur: list[str] = []
    started = False
    elided = False
    pending_elision = False
    for ln in sec.body:
        if not ln.strip():
            continue
        if is_elision(ln):
            elided = pending_elision = True
            continue
        mk = _marker(ln)
        if mk is not None and (not started or mk != cur_dev):
            if started and cur:
                chunks.append(DeviceChunk(cur_dev, sec.sub, tuple(cur), sec.cmd, elided))
            cur_dev, cur, started = mk, [], True
            elided, pending_elision = pending_elision, False
        cur.append(ln)
    if cur:
        chunks.append(DeviceChunk(cur_dev, sec.sub, tuple(cur), sec.cmd, elided))
    if sec.loop:
        seen = {c.device for c in chunks}
        absent = [d for d in sec.loop if d not in seen]
        if absent:
            why = "elided or no output" if pending_elision or elided else "no output"
            probs.add(
                f"loop over {len(sec.loop)} devices: devices "
                f"{', '.join(str(d) for d in absent)} missing ({why})"
            )
    return chunks


def _split_by_records(sec: _Section, probs: Problems) -> list[DeviceChunk]:
    """No markers: count records by their first line, then give them the loop's devices."""
    rx = _record_start_re(sec.sub, sec.body)
    if rx is None:
        kept = [ln for ln in sec.body if ln.strip() and not is_elision(ln)]
        return [DeviceChunk(None, sec.sub, tuple(kept), sec.cmd)] if kept else []
    segments = _records(sec.body, rx)
    records = [r for s in segments for r in s]
    devs, flags = _attribute_records(sec, segments, len(records), probs)
    return [
        DeviceChunk(devs[i], sec.sub, tuple(records[i]), sec.cmd, flags[i])
        for i in range(len(records))
    ]


def _records(body: list[str], rx: re.Pattern[str]) -> list[list[list[str]]]:
    """Records (lists of lines), grouped into segments by '...' elisions."""
    segments: list[list[list[str]]] = [[]]
    cur_rec: list[str] | None = None
    for ln in body:
        if not ln.strip():
            continue
        if is_elision(ln):
            if cur_rec is not None and rx is not _RECORD_START["lldp"]:
                cur_rec = None
            segments.append([])
            continue
        if rx.match(ln) or ERROR_RE.search(ln):
            cur_rec = [ln]
            segments[-1].append(cur_rec)
        elif cur_rec is not None:
            cur_rec.append(ln)
        else:
            cur_rec = [ln]
            segments[-1].append(cur_rec)
    return [s for s in segments if s] or [[]]


def _attribute_records(
    sec: _Section, segments: list[list[list[str]]], n: int, probs: Problems
) -> tuple[list[int | None], list[bool]]:
    """Each record's device (records before an elision from the loop's start, after it from its
    end), and whether an elision precedes it; what cannot be attributed is a problem."""
    devs: list[int | None] = [None] * n
    flags = [False] * n
    loop = sec.loop
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
    elif sec.is_loop and n > 1:
        probs.add("loop range unknown: records are not attributed to devices")
    elif n == 1 and sec.device is not None:
        devs[0] = sec.device
    return devs, flags


def _split(text: Any, sub: str | None, probs: Problems) -> LoopSplit:
    lines = split_lines(text)
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
        chunks.extend(_split_section(_Section(cmd, dev, eff, is_loop, loop, body), probs))
    elided = any(is_elision(ln) for ln in lines)
    return LoopSplit(tuple(chunks), tuple(loops), elided, probs.result())


@never_raises(lambda p: LoopSplit((), (), False, (p,)))
def split_loop_output(text: str | bytes, sub: str | None = None) -> LoopSplit:
    """Cut pasted hccn_tool output (single calls, `for i in {0..7}` loops) into device chunks."""
    return _split(text, sub, Problems())


def chunks_for(text: Any, sub: str, probs: Problems) -> list[DeviceChunk]:
    split = _split(text, sub, probs)
    out = []
    for c in split.chunks:
        if c.sub in (None, sub) or (sub == "link" and c.sub == "vnic"):
            out.append(c)
    return out


def key_value(line: str) -> tuple[str, str] | None:
    """`key : value` / `key:value` → (key, value) with padding removed."""
    if ":" not in line:
        return None
    k, _, v = line.partition(":")
    return k.strip(), v.strip()


def error_of(lines: Iterable[str]) -> str | None:
    for ln in lines:
        if ERROR_RE.search(ln):
            return ln.strip()
    return None


def note_duplicates(devices: Iterable[int | None], probs: Problems, what: str) -> None:
    seen: set[int] = set()
    for d in devices:
        if d is None:
            continue
        if d in seen:
            probs.add(f"{what}: device {d} appears more than once; the last value wins")
        seen.add(d)
