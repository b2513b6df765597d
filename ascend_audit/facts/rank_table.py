"""Rank tables (RANK_TABLE_FILE / hccl.json): v1.0, v1.2 super pod, legacy group_list, P/D lists."""

from __future__ import annotations

import ipaddress
import json
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import Any

from ascend_audit.facts.common import to_jsonable as _jsonable

__all__ = [
    "RankDevice",
    "RankServer",
    "RankTable",
    "SuperPod",
    "devices_of_server",
    "parse_rank_table",
    "problems_of",
    "strip_json_comments",
]

_MAX_PROBLEMS = 200
_MAX_TEXT = 64 * 1024 * 1024  # a rank table beyond 64 MiB is not a rank table


@dataclass(frozen=True)
class RankDevice:
    """One device (rank) entry of a rank table; values kept as the strings the file holds."""

    device_id: str | None
    device_ip: str | None
    rank_id: str | None  # as written; None in the group_list and P/D layouts
    server_id: str | None = None
    super_device_id: str | None = None
    super_pod_id: str | None = None
    device_port: str | None = None
    backup_device_ip: str | None = None
    backup_device_port: str | None = None
    host_port: str | None = None
    cluster_id: str | None = None  # P/D layout (1-based)
    role: str | None = None  # "prefill" | "decode" in the P/D layout
    index: int = 0  # position in the table (rank order for layouts without rank_id)

    @property
    def rank(self) -> int | None:
        """rank_id as an integer (None when absent or not an integer)."""
        return _int(self.rank_id)


@dataclass(frozen=True)
class RankServer:
    """One server (or legacy instance) with its devices in file order."""

    server_id: str | None
    devices: tuple[RankDevice, ...]
    host_ip: str | None = None
    container_ip: str | None = None
    hardware_type: str | None = None
    pod_name: str | None = None
    group_name: str | None = None
    super_pod_id: str | None = None


@dataclass(frozen=True)
class SuperPod:
    """A super pod of a v1.2 table and the server ids it lists."""

    super_pod_id: str | None
    server_ids: tuple[str, ...]


@dataclass(frozen=True)
class RankTable:
    """A parsed rank table; `layout` says which of the known formats it is."""

    layout: str  # "server_list" | "group_list" | "pd" | "rank_list" | "unknown" | "invalid"
    version: str | None
    status: str | None
    server_count: str | None  # as written
    servers: tuple[RankServer, ...]
    super_pods: tuple[SuperPod, ...] = ()
    group_count: str | None = None
    groups: tuple[tuple[str | None, str | None, str | None], ...] = ()  # name, inst, dev count
    rank_count: str | None = None  # version 2.0
    had_comments: bool = False
    problems: tuple[str, ...] = ()  # parse problems (see problems_of for consistency)

    @property
    def devices(self) -> tuple[RankDevice, ...]:
        """All devices in file order."""
        return tuple(d for s in self.servers for d in s.devices)

    @property
    def size(self) -> int:
        return sum(len(s.devices) for s in self.servers)

    def to_dict(self) -> dict[str, Any]:
        return _jsonable(self)


def _int(value: Any) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, str):
        v = value.strip()
        if v.isascii() and v.isdigit() and len(v) <= 18:
            return int(v)
    return None


def _str(value: Any) -> str | None:
    """A scalar as the string a rank table means by it (None for absent/containers)."""
    if value is None or isinstance(value, (dict, list)):
        return None
    if isinstance(value, bool):
        return str(value).lower()
    return str(value)


# ---------------------------------------------------------------------------------------------
# lenient JSON: comments, "..." elision lines, trailing commas, leading captions


def strip_json_comments(text: str) -> tuple[str, bool]:
    """Remove `//`, `#` and `/* */` comments outside strings, `...` lines and trailing commas."""
    out: list[str] = []
    had = False
    i, n = 0, len(text)
    in_str = False
    line_start = True
    while i < n:
        ch = text[i]
        if in_str:
            j = i
            while j < n and text[j] not in '"\\\n':
                j += 1
            out.append(text[i:j])
            if j >= n:
                break
            c = text[j]
            if c == "\\":
                out.append(text[j : j + 2])
                i = j + 2
            else:
                # a closing quote, or a newline inside an unterminated string (JSON will
                # reject it anyway): either way the string ends here
                out.append(c)
                in_str = False
                line_start = c == "\n"
                i = j + 1
            continue
        if ch == '"':
            in_str = True
            line_start = False
            out.append(ch)
            i += 1
        elif ch == "#" or (ch == "/" and text.startswith("//", i)):
            had = True
            j = text.find("\n", i)
            i = n if j < 0 else j
        elif ch == "/" and text.startswith("/*", i):
            had = True
            j = text.find("*/", i + 2)
            i = n if j < 0 else j + 2
        elif ch == "." and line_start:
            j = text.find("\n", i)
            end = n if j < 0 else j
            if set(text[i:end].strip()) <= {".", " "}:
                had = True
                i = end
            else:
                out.append(ch)
                line_start = False
                i += 1
        elif ch in "}]":
            k = len(out) - 1
            while k >= 0 and out[k].isspace():
                k -= 1
            if k >= 0 and out[k] == ",":
                out[k] = ""
            out.append(ch)
            line_start = False
            i += 1
        else:
            if ch == "\n":
                line_start = True
            elif not ch.isspace():
                line_start = False
            out.append(ch)
            i += 1
    return "".join(out), had


def _lenient_load(text: str, probs: list[str]) -> tuple[Any, bool]:
    start = min((p for p in (text.find("{"), text.find("[")) if p >= 0), default=-1)
    if start < 0:
        probs.append("no JSON object found")
        return None, False
    if text[:start].strip():
        probs.append(f"text before the JSON object ignored: {text[:start].strip()[:60]!r}")
    body = text[start:]
    try:
        return json.loads(body), False
    except (ValueError, RecursionError):
        pass
    cleaned, had = strip_json_comments(body)
    # drop text after the outermost value
    try:
        value, end = json.JSONDecoder().raw_decode(cleaned)
    except (ValueError, RecursionError) as exc:
        probs.append(f"not valid JSON even after removing comments: {str(exc)[:160]}")
        return None, had
    if cleaned[end:].strip():
        probs.append("text after the JSON object ignored")
    return value, had


# ---------------------------------------------------------------------------------------------
# layouts

_DEVICE_KEYS = (
    "device_id",
    "device_ip",
    "rank_id",
    "super_device_id",
    "device_port",
    "backup_device_ip",
    "backup_device_port",
    "host_port",
)


def _device(d: Any, idx: int, server_id: str | None, probs: list[str], **extra: Any) -> RankDevice:
    if not isinstance(d, dict):
        probs.append(f"device entry {idx} is not an object")
        return RankDevice(None, None, None, server_id=server_id, index=idx, **extra)
    vals = {k: _str(d.get(k)) for k in _DEVICE_KEYS}
    return RankDevice(
        vals["device_id"],
        vals["device_ip"],
        vals["rank_id"],
        server_id=server_id,
        super_device_id=vals["super_device_id"],
        device_port=vals["device_port"],
        backup_device_ip=vals["backup_device_ip"],
        backup_device_port=vals["backup_device_port"],
        host_port=vals["host_port"],
        index=idx,
        **extra,
    )


def _as_list(value: Any, what: str, probs: list[str]) -> list[Any]:
    if value is None:
        return []
    if not isinstance(value, list):
        probs.append(f"{what} is not a list")
        return []
    return value


def _server_list(doc: dict[str, Any], probs: list[str]) -> tuple[list[RankServer], list[SuperPod]]:
    pods: list[SuperPod] = []
    pod_of: dict[str, str | None] = {}
    for p in _as_list(doc.get("super_pod_list"), "super_pod_list", probs):
        if not isinstance(p, dict):
            probs.append("super_pod_list entry is not an object")
            continue
        ids = []
        for s in _as_list(p.get("server_list"), "super_pod_list.server_list", probs):
            sid = _str(s.get("server_id")) if isinstance(s, dict) else None
            if sid is not None:
                ids.append(sid)
                pod_of.setdefault(sid, _str(p.get("super_pod_id")))
        pods.append(SuperPod(_str(p.get("super_pod_id")), tuple(ids)))
    servers: list[RankServer] = []
    idx = 0
    for s in _as_list(doc.get("server_list"), "server_list", probs):
        if not isinstance(s, dict):
            probs.append("server_list entry is not an object")
            continue
        sid = _str(s.get("server_id"))
        pod = pod_of.get(sid) if sid is not None else None
        devs = []
        for d in _as_list(s.get("device"), f"server {sid} device", probs):
            devs.append(_device(d, idx, sid, probs, super_pod_id=pod))
            idx += 1
        servers.append(
            RankServer(
                sid,
                tuple(devs),
                host_ip=_str(s.get("host_ip")),
                container_ip=_str(s.get("container_ip")),
                hardware_type=_str(s.get("hardware_type")),
                super_pod_id=pod,
            )
        )
    return servers, pods


def _group_list(
    doc: dict[str, Any], probs: list[str]
) -> tuple[list[RankServer], list[tuple[str | None, str | None, str | None]]]:
    servers: list[RankServer] = []
    groups = []
    idx = 0
    for g in _as_list(doc.get("group_list"), "group_list", probs):
        if not isinstance(g, dict):
            probs.append("group_list entry is not an object")
            continue
        name = _str(g.get("group_name"))
        groups.append((name, _str(g.get("instance_count")), _str(g.get("device_count"))))
        for inst in _as_list(g.get("instance_list"), "instance_list", probs):
            if not isinstance(inst, dict):
                probs.append("instance_list entry is not an object")
                continue
            sid = _str(inst.get("server_id"))
            devs = []
            for d in _as_list(inst.get("devices"), f"instance {sid} devices", probs):
                devs.append(_device(d, idx, sid, probs))
                idx += 1
            servers.append(
                RankServer(sid, tuple(devs), pod_name=_str(inst.get("pod_name")), group_name=name)
            )
    return servers, groups


def _pd_lists(doc: dict[str, Any], probs: list[str]) -> list[RankServer]:
    by_server: dict[str | None, list[RankDevice]] = {}
    idx = 0
    for role in ("prefill", "decode"):
        for d in _as_list(doc.get(f"{role}_device_list"), f"{role}_device_list", probs):
            sid = _str(d.get("server_id")) if isinstance(d, dict) else None
            extra: dict[str, Any] = {"role": role}
            if isinstance(d, dict):
                extra["cluster_id"] = _str(d.get("cluster_id"))
                extra["super_pod_id"] = _str(d.get("super_pod_id"))
            by_server.setdefault(sid, []).append(_device(d, idx, sid, probs, **extra))
            idx += 1
    return [RankServer(sid, tuple(devs)) for sid, devs in by_server.items()]


def _rank_list(doc: dict[str, Any], probs: list[str]) -> list[RankServer]:
    devs = []
    for i, r in enumerate(_as_list(doc.get("rank_list"), "rank_list", probs)):
        if not isinstance(r, dict):
            probs.append("rank_list entry is not an object")
            continue
        devs.append(RankDevice(_str(r.get("device_id")), None, _str(r.get("rank_id")), index=i))
    return [RankServer(None, tuple(devs))] if devs else []


def parse_rank_table(text: str | bytes) -> RankTable:
    """Parse a rank table (JSON, or JSONC with `//`/`#` comments and `...` elisions)."""
    try:
        return _parse(text)
    except Exception as exc:  # pragma: no cover - last line of defence
        msg = f"internal parser error {type(exc).__name__}: {exc}"
        return RankTable("invalid", None, None, None, (), problems=(msg[:300],))


def _parse(text: Any) -> RankTable:
    if isinstance(text, (bytes, bytearray, memoryview)):
        text = bytes(text).decode("utf-8", errors="replace")
    if not isinstance(text, str):
        return RankTable("invalid", None, None, None, (), problems=("no text",))
    probs: list[str] = []
    if len(text) > _MAX_TEXT:
        return RankTable(
            "invalid", None, None, None, (), problems=("rank table larger than 64 MiB",)
        )
    text = text.lstrip("\ufeff")
    if not text.strip():
        return RankTable("invalid", None, None, None, (), problems=("empty rank table",))
    doc, had = _lenient_load(text, probs)
    if doc is None:
        return RankTable("invalid", None, None, None, (), had_comments=had, problems=tuple(probs))
    if not isinstance(doc, dict):
        probs.append("top level is not a JSON object")
        return RankTable("invalid", None, None, None, (), had_comments=had, problems=tuple(probs))
    version, status = _str(doc.get("version")), _str(doc.get("status"))
    server_count = _str(doc.get("server_count"))
    pods: list[SuperPod] = []
    groups: list[tuple[str | None, str | None, str | None]] = []
    if "server_list" in doc:
        layout = "server_list"
        servers, pods = _server_list(doc, probs)
    elif "group_list" in doc:
        layout = "group_list"
        servers, groups = _group_list(doc, probs)
    elif "prefill_device_list" in doc or "decode_device_list" in doc:
        layout = "pd"
        servers = _pd_lists(doc, probs)
    elif "rank_list" in doc:
        layout = "rank_list"
        servers = _rank_list(doc, probs)
    else:
        layout = "unknown"
        servers = []
        probs.append("no server_list, group_list, prefill/decode_device_list or rank_list")
    return RankTable(
        layout,
        version,
        status,
        server_count,
        tuple(servers),
        tuple(pods),
        group_count=_str(doc.get("group_count")),
        groups=tuple(groups),
        rank_count=_str(doc.get("rank_count")),
        had_comments=had,
        problems=tuple(p[:300] for p in probs[:_MAX_PROBLEMS]),
    )


# ---------------------------------------------------------------------------------------------
# consistency


def _ip(value: str | None) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    if not value:
        return None
    try:
        return ipaddress.ip_address(value.strip())
    except ValueError:
        return None


def _dup_values(items: Iterable[tuple[str, Any]]) -> dict[Any, list[str]]:
    seen: dict[Any, list[str]] = {}
    for where, v in items:
        if v is not None:
            seen.setdefault(v, []).append(where)
    return {v: w for v, w in seen.items() if len(w) > 1}


def problems_of(table: RankTable) -> list[str]:
    """Consistency findings: status, counts, rank ids, device ids/ips, super-pod fields."""
    try:
        return _problems_of(table)
    except Exception as exc:  # pragma: no cover - last line of defence
        return [f"internal checker error {type(exc).__name__}: {exc}"[:300]]


def _problems_of(t: RankTable) -> list[str]:
    out: list[str] = list(t.problems)
    if t.layout in ("invalid", "unknown"):
        return out
    rules = _ENVELOPE_RULES if t.layout == "rank_list" else _ENVELOPE_RULES + _LAYOUT_RULES
    for rule in rules:
        for msg in rule(t):
            if len(out) >= _MAX_PROBLEMS:
                return out
            out.append(msg[:300])
    return out


# Each rule reads one part of the table and yields what is wrong with it, in table order.


def _status_rule(t: RankTable) -> Iterator[str]:
    """`status` must be "completed": the generator writes the table before it is done."""
    if t.status is None:
        yield 'status is missing (must be "completed")'
    elif t.status != "completed":
        yield f'status is {t.status!r}, not "completed": the table is not ready'


def _devices_listed_rule(t: RankTable) -> Iterator[str]:
    if not t.devices:
        yield "the table lists no devices"


def _version_rule(t: RankTable) -> Iterator[str]:
    """server_list tables are version 1.0 or 1.2 (1.2 with super pods); rank_list is 2.0."""
    if t.layout == "server_list":
        if t.version is None:
            yield "version is missing"
        elif t.version not in ("1.0", "1.2"):
            yield f"unexpected version {t.version!r} for a server_list table"
        if t.super_pods and t.version != "1.2":
            yield f'super_pod_list present but version is {t.version!r}, not "1.2"'
    if t.layout == "rank_list":
        yield "version 2.0 rank_list layout (Atlas 950): not checked further"


def _server_count_rule(t: RankTable) -> Iterator[str]:
    n_servers = len(t.servers)
    if t.server_count is None:
        if t.layout == "server_list" and t.version != "1.2":
            yield "server_count is missing (mandatory in version 1.0)"
        return
    sc = _int(t.server_count)
    if sc is None:
        yield f"server_count {t.server_count!r} is not an integer"
    elif sc != n_servers:
        yield f"server_count is {sc} but the table lists {n_servers} server(s)"


def _server_id_rule(t: RankTable) -> Iterator[str]:
    """Every server has a short, unique server_id (P/D tables name instances instead)."""
    if t.layout == "pd":
        return
    for i, s in enumerate(t.servers):
        if not s.server_id:
            yield f"server #{i} has no server_id"
        elif len(s.server_id) > 64:
            yield f"server_id {s.server_id[:40]!r}... is longer than 64 characters"
    sids = [(f"server #{i}", s.server_id) for i, s in enumerate(t.servers)]
    for sid, places in _dup_values(sids).items():
        yield f"server_id {sid!r} appears {len(places)} times"


def _group_count_rule(t: RankTable) -> Iterator[str]:
    """Legacy group_list tables: group, instance and device counts match what is listed."""
    if t.layout != "group_list":
        return
    gc = _int(t.group_count)
    if t.group_count is not None and gc != len(t.groups):
        yield f"group_count is {t.group_count!r} but the table lists {len(t.groups)} group(s)"
    for name, inst, dev in t.groups:
        members = [s for s in t.servers if s.group_name == name]
        if inst is not None and _int(inst) != len(members):
            yield f"group {name!r}: instance_count {inst!r} but {len(members)} instance(s)"
        n_dev = sum(len(s.devices) for s in members)
        if dev is not None and _int(dev) != n_dev:
            yield f"group {name!r}: device_count {dev!r} but {n_dev} device(s)"


def _device_id_rule(t: RankTable) -> Iterator[str]:
    """Each server's device_ids are integers 0-15, each listed once."""
    for s in t.servers:
        ids: list[tuple[str, int | None]] = []
        for d in s.devices:
            if d.device_id is None:
                yield f"server {s.server_id}: a device has no device_id"
                continue
            v = _int(d.device_id)
            if v is None:
                yield f"server {s.server_id}: device_id {d.device_id!r} is not an integer"
            elif v > 15:
                yield f"server {s.server_id}: device_id {v} is beyond 0-15"
            ids.append((f"server {s.server_id}", v))
        for v in _dup_values(ids):
            yield f"server {s.server_id}: device_id {v} appears more than once"


def _rank_id_rule(t: RankTable) -> Iterator[str]:
    """server_list: rank ids are exactly 0..n-1 and contiguous per server; P/D: cluster ids."""
    if t.layout == "server_list":
        yield from _rank_findings(t)
    elif t.layout == "pd":
        cids = [(f"device #{d.index}", _int(d.cluster_id)) for d in t.devices]
        for d in t.devices:
            if _int(d.cluster_id) is None:
                yield f"server {d.server_id} device {d.device_id}: cluster_id missing or not int"
        for v, places in _dup_values(cids).items():
            yield f"cluster_id {v} appears {len(places)} times"


def _device_ip_rule(t: RankTable) -> Iterator[str]:
    """device_ip: present across servers, valid, unique, and of one address family."""
    multi = len(t.servers) > 1
    fams = set()
    ips: list[tuple[str, str]] = []
    for d in t.devices:
        where = f"server {d.server_id} device {d.device_id}"
        if not d.device_ip:
            if multi or t.layout == "pd":
                yield f"{where}: device_ip missing (mandatory across servers)"
            continue
        ip = _ip(d.device_ip)
        if ip is None:
            yield f"{where}: device_ip {d.device_ip!r} is not a valid IP address"
            continue
        fams.add(ip.version)
        ips.append((where, str(ip)))
    for addr, places in _dup_values(ips).items():
        yield f"device_ip {addr} used by {len(places)} devices ({', '.join(places[:4])})"
    if len(fams) > 1:
        yield "device_ip values mix IPv4 and IPv6; all ranks must use one family"


def _super_device_rule(t: RankTable) -> Iterator[str]:
    """A3 (version 1.2): every device has an integer super_device_id, unique in its super pod."""
    if t.version != "1.2" or t.layout not in ("server_list", "pd"):
        return
    if not (t.layout == "server_list" or any(d.super_device_id for d in t.devices)):
        return
    for d in t.devices:
        if not d.super_device_id:
            yield (
                f"server {d.server_id} device {d.device_id}: super_device_id missing "
                "(required by version 1.2)"
            )
        elif _int(d.super_device_id) is None:
            yield (
                f"server {d.server_id} device {d.device_id}: super_device_id "
                f"{d.super_device_id!r} is not an integer"
            )
    by_pod: dict[str | None, list[tuple[str, Any]]] = {}
    for d in t.devices:
        by_pod.setdefault(d.super_pod_id, []).append(
            (f"server {d.server_id} device {d.device_id}", d.super_device_id)
        )
    for pod, items in by_pod.items():
        for sdid, places in _dup_values(items).items():
            yield f"super pod {pod}: super_device_id {sdid} used by {len(places)} devices"


def _super_pod_rule(t: RankTable) -> Iterator[str]:
    """super_pod_list: names known servers, each in exactly one pod, pods listed contiguously."""
    if not t.super_pods:
        return
    known = {s.server_id for s in t.servers}
    listed: dict[str, str | None] = {}
    for p in t.super_pods:
        for sid in p.server_ids:
            if sid not in known:
                yield f"super pod {p.super_pod_id} lists unknown server_id {sid!r}"
            if sid in listed:
                yield f"server_id {sid!r} is in more than one super pod"
            listed[sid] = p.super_pod_id
    for s in t.servers:
        if s.server_id not in listed:
            yield f"server {s.server_id} is in no super pod"
    order = [s.super_pod_id for s in t.servers if s.super_pod_id is not None]
    closed: set[str] = set()
    for i, pod in enumerate(order):
        if i and order[i - 1] != pod:
            closed.add(order[i - 1])
        if pod in closed:
            yield f"servers of super pod {pod} are not listed contiguously"
            return


_ENVELOPE_RULES: tuple[Callable[[RankTable], Iterator[str]], ...] = (
    _status_rule,
    _devices_listed_rule,
    _version_rule,
)
_LAYOUT_RULES: tuple[Callable[[RankTable], Iterator[str]], ...] = (
    _server_count_rule,
    _server_id_rule,
    _group_count_rule,
    _device_id_rule,
    _rank_id_rule,
    _device_ip_rule,
    _super_device_rule,
    _super_pod_rule,
)


def _rank_findings(t: RankTable) -> Iterator[str]:
    ranks: list[tuple[str, int | None]] = []
    for d in t.devices:
        where = f"server {d.server_id} device {d.device_id}"
        if d.rank_id is None:
            yield f"{where}: rank_id missing"
            continue
        r = _int(d.rank_id)
        if r is None:
            yield f"{where}: rank_id {d.rank_id!r} is not a non-negative integer"
        ranks.append((where, r))
    for r, places in _dup_values(ranks).items():
        yield f"rank_id {r} appears {len(places)} times ({', '.join(places[:4])})"
    values = {r for _w, r in ranks if r is not None}
    if values:
        n = t.size
        expected = set(range(n))
        missing = sorted(expected - values)
        beyond = sorted(values - expected)
        if missing or beyond:
            parts = []
            if missing:
                parts.append(f"missing {_ranges(missing)}")
            if beyond:
                parts.append(f"out of range {_ranges(beyond)}")
            yield f"rank_id values are not exactly 0..{n - 1}: {'; '.join(parts)}"
    for s in t.servers:
        rs = sorted(r for r in (_int(d.rank_id) for d in s.devices) if r is not None)
        if rs and rs[-1] - rs[0] + 1 != len(rs):
            yield (
                f"server {s.server_id}: rank_ids {_ranges(rs)} are not contiguous "
                "(ranks must not interleave across servers)"
            )


def _ranges(values: list[int]) -> str:
    """Compact `0-3, 7, 9-10` form of sorted integers (first 20 runs)."""
    runs: list[str] = []
    start: int | None = None
    prev = 0  # read only once start is set
    for v in values:
        if start is None:
            start = prev = v
        elif v == prev + 1:
            prev = v
        else:
            runs.append(f"{start}-{prev}" if start != prev else f"{start}")
            start = prev = v
    if start is not None:
        runs.append(f"{start}-{prev}" if start != prev else f"{start}")
    more = f" (+{len(runs) - 20} more)" if len(runs) > 20 else ""
    return ", ".join(runs[:20]) + more


def devices_of_server(table: RankTable, server_ip_or_id: str) -> tuple[RankDevice, ...]:
    """Devices of the server whose server_id, host_ip or container_ip equals the argument."""
    key = (server_ip_or_id or "").strip()
    if not key:
        return ()
    for s in table.servers:
        if key in (s.server_id, s.host_ip, s.container_ip):
            return s.devices
    return ()
