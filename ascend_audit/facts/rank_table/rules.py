"""Consistency of a parsed rank table, one named rule a concern (status, counts, ids, IPs, pods)."""

from __future__ import annotations

import ipaddress
from collections.abc import Callable, Iterable, Iterator
from typing import Any

from ascend_audit.facts.rank_table.model import MAX_PROBLEMS, RankTable, as_int


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
            if len(out) >= MAX_PROBLEMS:
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
    sc = as_int(t.server_count)
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
    gc = as_int(t.group_count)
    if t.group_count is not None and gc != len(t.groups):
        yield f"group_count is {t.group_count!r} but the table lists {len(t.groups)} group(s)"
    for name, inst, dev in t.groups:
        members = [s for s in t.servers if s.group_name == name]
        if inst is not None and as_int(inst) != len(members):
            yield f"group {name!r}: instance_count {inst!r} but {len(members)} instance(s)"
        n_dev = sum(len(s.devices) for s in members)
        if dev is not None and as_int(dev) != n_dev:
            yield f"group {name!r}: device_count {dev!r} but {n_dev} device(s)"


def _device_id_rule(t: RankTable) -> Iterator[str]:
    """Each server's device_ids are integers 0-15, each listed once."""
    for s in t.servers:
        ids: list[tuple[str, int | None]] = []
        for d in s.devices:
            if d.device_id is None:
                yield f"server {s.server_id}: a device has no device_id"
                continue
            v = as_int(d.device_id)
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
        cids = [(f"device #{d.index}", as_int(d.cluster_id)) for d in t.devices]
        for d in t.devices:
            if as_int(d.cluster_id) is None:
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
        elif as_int(d.super_device_id) is None:
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
        r = as_int(d.rank_id)
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
        rs = sorted(r for r in (as_int(d.rank_id) for d in s.devices) if r is not None)
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
