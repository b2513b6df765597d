"""Storage gatherers: NVMe (udev or sysfs), the mount table, and where the model weights live."""

from __future__ import annotations

import contextlib
import dataclasses
import posixpath
import shlex
from typing import Any

from ascend_audit.context import Context, gatherer
from ascend_audit.facts.mounts import MountTable
from ascend_audit.facts.storage import (
    MOUNTS,
    NVME,
    WEIGHTS_STORAGE,
    Mounts,
    NvmeScan,
    WeightsPath,
    WeightsStorage,
)
from ascend_audit.facts.sysfs import NvmeInventory, parse_numa_node, parse_nvme_address
from ascend_audit.host.base import FileRead, ProcessInfo

MINDIE_CONFIG = "conf/config.json"
MINDIE_DEFAULT_HOME = "/usr/local/Ascend/mindie/latest/mindie-service"


# --------------------------------------------------------------------------------------------
# NVMe


def _udev_overlay(inv: NvmeInventory, devices: list[dict[str, Any]]) -> NvmeInventory:
    """Controllers' transport, address, state and NUMA node from udev over the sysfs reading."""
    by_name = {str(d.get("sys_name")): d for d in devices if isinstance(d, dict)}
    controllers = []
    for c in inv.controllers:
        dev = by_name.get(c.name)
        attrs = dev.get("attributes") if isinstance(dev, dict) else None
        if not isinstance(attrs, dict):
            controllers.append(c)
            continue
        address = str(attrs.get("address", c.address or "")).strip() or c.address
        addr = parse_nvme_address(address)
        numa = attrs.get("numa_node")
        controllers.append(
            dataclasses.replace(
                c,
                transport=str(attrs.get("transport", c.transport or "")).strip() or c.transport,
                state=str(attrs.get("state", c.state or "")).strip() or c.state,
                address=address,
                traddr=addr.get("traddr", c.traddr),
                trsvcid=addr.get("trsvcid", c.trsvcid),
                numa_node=parse_numa_node(str(numa)) if numa is not None else c.numa_node,
            )
        )
    known = {c.name for c in inv.controllers}
    unseen = sorted(n for n in by_name if n.startswith("nvme") and n not in known)
    problems = list(inv.problems)
    if unseen:
        problems.append(f"udev lists NVMe controllers that sysfs did not show: {', '.join(unseen)}")
    return dataclasses.replace(inv, controllers=tuple(controllers), problems=tuple(problems))


@gatherer(NVME, "driver")
def nvme(ctx: Context) -> NvmeScan:
    """NVMe controllers, subsystems, namespaces, paths; controller state from udev if usable."""
    from ascend_audit.facts.sysfs import collect_nvme

    inv = collect_nvme(ctx.host)  # never reads `nuse`
    devices = ctx.host.udev("nvme")
    if devices is None:
        return NvmeScan(inv, "sysfs")
    return NvmeScan(_udev_overlay(inv, devices), "udev")


# --------------------------------------------------------------------------------------------
# mounts


def read_mounts(ctx: Context, pid: int | None = None) -> Mounts:
    """The mount table: a process's (or our own) mountinfo, falling back to /proc/mounts."""
    from ascend_audit.facts.mounts import parse_mountinfo, parse_proc_mounts

    own = "/proc/self/mountinfo"
    tried = [f"/proc/{pid}/mountinfo", own] if pid else [own]
    last: FileRead | None = None
    for path in tried:
        res = ctx.host.read_text(path)
        if res.ok and (res.text or "").strip():
            table = parse_mountinfo(res.text)
            if table.mounts:
                return Mounts(table, res)
        last = res
    res = ctx.host.read_text("/proc/mounts")
    if res.ok:
        return Mounts(parse_proc_mounts(res.text), res)
    return Mounts(MountTable((), "none", (f"{own} and /proc/mounts unreadable",)), last or res)


@gatherer(MOUNTS, "driver")
def mounts(ctx: Context) -> Mounts:
    """The auditor's mount table (/proc/self/mountinfo, else /proc/mounts)."""
    return read_mounts(ctx)


# --------------------------------------------------------------------------------------------
# which directory holds the weights


def _is_pathlike(value: str) -> bool:
    return value.startswith(("/", "./", "../", "~"))


def model_from_argv(argv: tuple[str, ...] | list[str]) -> tuple[str | None, str]:
    """The model a vLLM / MindIE command line names, and what kind of server it is."""
    from ascend_audit.facts.serving_config.argv import is_vllm_argv, parse_vllm_argv

    toks = [str(t) for t in argv]
    if len(toks) == 1 and " " in toks[0]:
        with contextlib.suppress(ValueError):
            toks = shlex.split(toks[0])  # some launchers rewrite argv into one string
    if is_vllm_argv(toks):
        model = parse_vllm_argv(toks).model
        return (str(model) if model else None), "vllm"
    for i, t in enumerate(toks):
        if t in ("--model", "--model-path", "--model_path") and i + 1 < len(toks):
            return toks[i + 1], "server"
        if t.startswith(("--model=", "--model-path=", "--model_path=")):
            return t.split("=", 1)[1], "server"
    if any("mindie" in posixpath.basename(t).lower() for t in toks[:2]):
        return None, "mindie"
    return None, ""


def _mindie_weights(ctx: Context, proc: ProcessInfo) -> tuple[str | None, str]:
    """MindIE's modelWeightPath from the config.json beside its daemon."""
    from ascend_audit.facts.serving_config.mindie import parse_mindie_config

    homes = []
    if proc.environ.get("MIES_INSTALL_PATH"):
        homes.append(proc.environ["MIES_INSTALL_PATH"])
    if proc.exe:
        homes.append(posixpath.dirname(posixpath.dirname(proc.exe)))
    homes.append(MINDIE_DEFAULT_HOME)
    for home in dict.fromkeys(homes):
        path = posixpath.join(home, MINDIE_CONFIG)
        res = ctx.host.read_text(path)
        if res.ok and res.text:
            cfg = parse_mindie_config(res.text, path)
            if cfg.model_path:
                return cfg.model_path, path
    return None, ""


def find_weights_path(ctx: Context) -> WeightsPath:
    """Policy `driver.weights_path`, else the model directory of a running serving process."""
    configured = ctx.policy.get("driver.weights_path")
    if configured:
        return WeightsPath(str(configured), "policy driver.weights_path")
    hub_ids: list[str] = []
    try:
        procs = ctx.host.processes()
    except Exception as exc:  # a host that cannot list processes simply has none to offer
        return WeightsPath(None, "", note=f"process list unavailable ({type(exc).__name__})")
    for proc in procs:
        model, kind = model_from_argv(proc.cmdline)
        cmd = " ".join(proc.cmdline)[:120]
        if kind == "mindie":
            path, config = _mindie_weights(ctx, proc)
            if path:
                return WeightsPath(path, f"process {proc.pid} ({cmd}) via {config}", proc.pid)
            continue
        if not model:
            continue
        if not _is_pathlike(model) and not ctx.host.exists(model):
            hub_ids.append(model)
            continue
        if not model.startswith("/") and proc.cwd:
            model = posixpath.normpath(posixpath.join(proc.cwd, model))
        return WeightsPath(model, f"process {proc.pid} ({cmd})", proc.pid)
    note = ""
    if hub_ids:
        note = f"the serving process loads hub model {hub_ids[0]!r}, not a local directory"
    return WeightsPath(None, "", note=note)


@gatherer(WEIGHTS_STORAGE, "driver")
def weights_storage(ctx: Context) -> WeightsStorage:
    """Which filesystem and device hold the weights: NVMe-oF, local NVMe, NFS, other."""
    from ascend_audit.facts.mounts import classify_path

    weights = find_weights_path(ctx)
    scan = ctx.fact(NVME)
    if weights.path is None:
        return WeightsStorage(weights, None, None, None, scan.via)
    table = read_mounts(ctx, weights.pid) if weights.pid else ctx.fact(MOUNTS)
    location = classify_path(weights.path, table.table, ctx.host, scan.inventory)
    return WeightsStorage(weights, ctx.host.exists(weights.path), location, table, scan.via)


# --------------------------------------------------------------------------------------------
# inventory


def inventory(facts: dict[str, Any]) -> dict[str, Any]:
    """The weights path, its storage kind and device, NVMe controllers and NVMe-oF subsystems."""
    scan: NvmeScan | None = facts.get("nvme")
    ws: WeightsStorage | None = facts.get("weights_storage")
    if scan is None and ws is None:
        return {}
    storage: dict[str, Any] = {}
    if ws is not None:
        loc = ws.location
        storage.update(
            {
                "weights_path": ws.weights.path,
                "weights_origin": ws.weights.origin,
                "kind": loc.kind if loc else None,
                "fstype": loc.fstype if loc else None,
                "mount_point": loc.mount_point if loc else None,
                "device": loc.source if loc else None,
                "block_devices": list(loc.block_devices) if loc else [],
                "transport": loc.transport if loc else None,
                "weights_controllers": ws.controllers(scan.inventory if scan else None),
                "ana_states": dict(loc.ana_states) if loc else {},
            }
        )
    if scan is not None:
        inv = scan.inventory
        storage["nvme_via"] = scan.via
        storage["controllers"] = [
            {
                "name": c.name,
                "transport": c.transport,
                "address": c.address,
                "state": c.state,
                "numa_node": c.numa_node,
                "subsystem": c.subsystem,
                "model": c.model,
                "paths": {p.name: p.ana_state for p in c.paths},
            }
            for c in inv.controllers
        ]
        fabric = {c.subsystem for c in inv.controllers if c.fabrics and c.subsystem}
        storage["nvmeof_subsystems"] = [
            {
                "name": s.name,
                "nqn": s.subsysnqn,
                "iopolicy": s.iopolicy,
                "controllers": list(s.controllers),
                "namespaces": list(s.namespaces),
            }
            for s in inv.subsystems
            if s.name in fabric
        ]
    return {"storage": storage}
