"""Facts about the auditing context: container or host, and the NPUs it was given.

Gathered once and recorded in snapshots (files through the Host), so a replay gives the same
verdicts whoever replays it. Who audits and who holds the NPUs are gathered in `users`.
"""

from __future__ import annotations

from typing import Any

from ascend_audit.context import Context, gatherer
from ascend_audit.facts.container import (
    CONTAINER,
    DEVICE_GRANT,
    ContainerInfo,
    DeviceGrant,
    DeviceMask,
    detect_container,
    parse_devices_list,
    parse_mask,
)

# The driver, network and version-file parsers are imported inside the gatherers that use them:
# every run asks for the container fact, most never for those.
MASK_VARIABLES = ("ASCEND_RT_VISIBLE_DEVICES", "ASCEND_VISIBLE_DEVICES")
DEVICES_LIST = "/sys/fs/cgroup/devices/devices.list"


def _text(ctx: Context, path: str) -> str | None:
    read = ctx.host.read_text(path)
    return read.text if read.ok else None


@gatherer(CONTAINER, "driver")
def container(ctx: Context) -> ContainerInfo:
    """/.dockerenv, /run/.containerenv, PID 1's cgroup and sched, `container=` in the env."""
    return detect_container(
        ctx.host.exists("/.dockerenv"),
        ctx.host.exists("/run/.containerenv"),
        _text(ctx, "/proc/1/cgroup"),
        _text(ctx, "/proc/1/sched"),
        ctx.host.env().get("container"),
    )


def _davinci_major(ctx: Context) -> int | None:
    for line in (_text(ctx, "/proc/devices") or "").splitlines():
        parts = line.split()
        if len(parts) == 2 and parts[0].isdigit() and parts[1].startswith("devdrv"):
            return int(parts[0])
    return None


def _masks(ctx: Context) -> tuple[DeviceMask, ...]:
    from ascend_audit.facts.network import SERVING_ENV

    senv = ctx.fact(SERVING_ENV)  # a serving process's environ, else the audit's own
    env, origin = senv.env, senv.origin
    out = [
        parse_mask(var, env[var], origin, ranges=var == "ASCEND_VISIBLE_DEVICES")
        for var in MASK_VARIABLES
        if var in env
    ]
    wanted = ctx.policy.get("driver.visible_devices")
    if wanted and not any(m.variable == "ASCEND_RT_VISIBLE_DEVICES" for m in out):
        out.append(parse_mask("ASCEND_RT_VISIBLE_DEVICES", str(wanted), "policy"))
    return tuple(out)


@gatherer(DEVICE_GRANT, "driver")
def device_grant(ctx: Context) -> DeviceGrant:
    """What this node or container exposes: /dev/davinciN, the device cgroup, the masks."""
    from ascend_audit.facts.driver_scan import DEV_NODES

    info = ctx.fact(CONTAINER)
    dev = ctx.fact(DEV_NODES)
    sources = ["/dev/davinci*"]
    allowed: tuple[int, ...] | None = None
    listing = _text(ctx, DEVICES_LIST)
    if listing is not None and info.in_container:
        allow_all, minors = parse_devices_list(listing, _davinci_major(ctx))
        if not allow_all:
            allowed = minors
            sources.append(DEVICES_LIST)
    return DeviceGrant(info.in_container, dev.davinci_indices, allowed, _masks(ctx), tuple(sources))


def inventory(facts: dict[str, Any]) -> dict[str, Any]:
    """Container or host, and the NPUs it was given."""
    out: dict[str, Any] = {}
    info = facts.get("container")
    if isinstance(info, ContainerInfo):
        out["container"] = info.to_dict()
    grant = facts.get("device_grant")
    if isinstance(grant, DeviceGrant):
        out["device_grant"] = grant.to_dict()
    return out
