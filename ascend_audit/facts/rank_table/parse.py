"""Reading a rank table's layout: v1.0 / v1.2 (A3 super pod) server_list, legacy group_list,
P/D device lists and the v2.0 rank_list."""

from __future__ import annotations

from typing import Any

from ascend_audit.facts.rank_table.jsonc import lenient_load
from ascend_audit.facts.rank_table.model import (
    MAX_PROBLEMS,
    RankDevice,
    RankServer,
    RankTable,
    SuperPod,
    as_str,
)

_MAX_TEXT = 64 * 1024 * 1024  # a rank table beyond 64 MiB is not a rank table

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
    vals = {k: as_str(d.get(k)) for k in _DEVICE_KEYS}
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
            sid = as_str(s.get("server_id")) if isinstance(s, dict) else None
            if sid is not None:
                ids.append(sid)
                pod_of.setdefault(sid, as_str(p.get("super_pod_id")))
        pods.append(SuperPod(as_str(p.get("super_pod_id")), tuple(ids)))
    servers: list[RankServer] = []
    idx = 0
    for s in _as_list(doc.get("server_list"), "server_list", probs):
        if not isinstance(s, dict):
            probs.append("server_list entry is not an object")
            continue
        sid = as_str(s.get("server_id"))
        pod = pod_of.get(sid) if sid is not None else None
        devs = []
        for d in _as_list(s.get("device"), f"server {sid} device", probs):
            devs.append(_device(d, idx, sid, probs, super_pod_id=pod))
            idx += 1
        servers.append(
            RankServer(
                sid,
                tuple(devs),
                host_ip=as_str(s.get("host_ip")),
                container_ip=as_str(s.get("container_ip")),
                hardware_type=as_str(s.get("hardware_type")),
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
        name = as_str(g.get("group_name"))
        groups.append((name, as_str(g.get("instance_count")), as_str(g.get("device_count"))))
        for inst in _as_list(g.get("instance_list"), "instance_list", probs):
            if not isinstance(inst, dict):
                probs.append("instance_list entry is not an object")
                continue
            sid = as_str(inst.get("server_id"))
            devs = []
            for d in _as_list(inst.get("devices"), f"instance {sid} devices", probs):
                devs.append(_device(d, idx, sid, probs))
                idx += 1
            servers.append(
                RankServer(sid, tuple(devs), pod_name=as_str(inst.get("pod_name")), group_name=name)
            )
    return servers, groups


def _pd_lists(doc: dict[str, Any], probs: list[str]) -> list[RankServer]:
    by_server: dict[str | None, list[RankDevice]] = {}
    idx = 0
    for role in ("prefill", "decode"):
        for d in _as_list(doc.get(f"{role}_device_list"), f"{role}_device_list", probs):
            sid = as_str(d.get("server_id")) if isinstance(d, dict) else None
            extra: dict[str, Any] = {"role": role}
            if isinstance(d, dict):
                extra["cluster_id"] = as_str(d.get("cluster_id"))
                extra["super_pod_id"] = as_str(d.get("super_pod_id"))
            by_server.setdefault(sid, []).append(_device(d, idx, sid, probs, **extra))
            idx += 1
    return [RankServer(sid, tuple(devs)) for sid, devs in by_server.items()]


def _rank_list(doc: dict[str, Any], probs: list[str]) -> list[RankServer]:
    devs = []
    for i, r in enumerate(_as_list(doc.get("rank_list"), "rank_list", probs)):
        if not isinstance(r, dict):
            probs.append("rank_list entry is not an object")
            continue
        devs.append(RankDevice(as_str(r.get("device_id")), None, as_str(r.get("rank_id")), index=i))
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
    doc, had = lenient_load(text, probs)
    if doc is None:
        return RankTable("invalid", None, None, None, (), had_comments=had, problems=tuple(probs))
    if not isinstance(doc, dict):
        probs.append("top level is not a JSON object")
        return RankTable("invalid", None, None, None, (), had_comments=had, problems=tuple(probs))
    version, status = as_str(doc.get("version")), as_str(doc.get("status"))
    server_count = as_str(doc.get("server_count"))
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
        group_count=as_str(doc.get("group_count")),
        groups=tuple(groups),
        rank_count=as_str(doc.get("rank_count")),
        had_comments=had,
        problems=tuple(p[:300] for p in probs[:MAX_PROBLEMS]),
    )
