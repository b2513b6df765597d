"""Visible devices: the ASCEND_*_VISIBLE_DEVICES mask is valid here and large enough."""

from __future__ import annotations

from ascend_audit.context import Context
from ascend_audit.facts.container import DEVICE_GRANT, DeviceGrant, DeviceMask, parse_mask
from ascend_audit.facts.driver_scan import NPU_SMI
from ascend_audit.facts.framework_inputs import SERVING_CONFIGS
from ascend_audit.facts.network import SERVING_ENV
from ascend_audit.model import Evidence, Outcome, Status, fail, passed, skip, warn
from ascend_audit.registry import check

RT = "ASCEND_RT_VISIBLE_DEVICES"
DOCKER = "ASCEND_VISIBLE_DEVICES"


def _as_int(value: object) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else None


def needed_devices(ctx: Context) -> tuple[int | None, str]:
    """Devices the serving command needs on this node: tensor parallel x local data parallel."""
    try:
        configs = ctx.fact(SERVING_CONFIGS).configs
    except Exception:
        return None, ""
    for c in configs:
        tp = c.tensor_parallel_size or _as_int(c.options.get("tensor_parallel_size"))
        if not tp:
            continue
        local = _as_int(c.options.get("data_parallel_size_local"))
        dp = local or _as_int(c.options.get("data_parallel_size")) or 1
        how = "local DP" if local else "DP"
        return tp * dp, f"TP {tp} x {how} {dp} of {c.source}"
    return None, ""


def config_masks(ctx: Context) -> list[DeviceMask]:
    """ASCEND_RT_VISIBLE_DEVICES set in a serving config or launch script."""
    try:
        configs = ctx.fact(SERVING_CONFIGS).configs
    except Exception:
        return []
    return [parse_mask(RT, c.env[RT], c.source) for c in configs if c.env.get(RT)]


def rt_findings(mask: DeviceMask, exposed: int, need: int | None, why: str) -> list[Outcome]:
    """The runtime mask: ids, order, duplicates, range, and enough devices."""
    shown = f"{mask.variable}={mask.raw} ({mask.source})"
    out: list[Outcome] = [fail(f"{shown}: {p}") for p in mask.problems]
    if mask.duplicates:
        out.append(fail(f"{shown} names device {', '.join(map(str, mask.duplicates))} twice"))
    elif not mask.ascending:
        out.append(fail(f"{shown} is not ascending: CANN refuses it (EE1001)"))
    beyond = [i for i in mask.ids if i >= exposed] if exposed else []
    if beyond:
        out.append(
            fail(
                f"{shown} names device {', '.join(map(str, beyond))} but this node exposes "
                f"{exposed} device(s) (0-{exposed - 1})"
            )
        )
    usable = len(set(mask.ids) - set(beyond))
    if need and usable < need:
        out.append(fail(f"{shown} gives {usable} device(s) but the service needs {need} ({why})"))
    return out


def docker_findings(mask: DeviceMask, grant: DeviceGrant) -> list[Outcome]:
    """ASCEND_VISIBLE_DEVICES inside a container only works through the Ascend Docker Runtime."""
    shown = f"{mask.variable}={mask.raw} ({mask.source})"
    out: list[Outcome] = [fail(f"{shown}: {p}") for p in mask.problems]
    given = set(grant.given)
    if grant.in_container and given and mask.ids and set(mask.ids) != given:
        out.append(
            warn(
                f"{shown} does not match the devices this container was given (davinci "
                f"{', '.join(map(str, sorted(given)))}): the Ascend Docker Runtime reads it when "
                "the container starts; devices mapped explicitly (--device, compose devices:) win"
            )
        )
    return out


def table_gaps(ctx: Context) -> str:
    """Why the serving process's own mask may be unread: '' when the process scan completed."""
    try:
        gaps = ctx.fact(SERVING_ENV).table_gaps
    except Exception:
        return ""
    more = f" (+{len(gaps) - 3} more)" if len(gaps) > 3 else ""
    return f"process table incomplete ({'; '.join(gaps[:3])}{more})" if gaps else ""


@check("DRV-NPU-004")
def visible_devices(ctx: Context) -> Outcome:
    grant = ctx.fact(DEVICE_GRANT)
    masks = [*grant.masks, *config_masks(ctx)]
    unread = table_gaps(ctx)
    if not masks:
        if unread:
            return skip(f"{unread}: the serving process's {RT} may be among what was not read")
        return skip(
            f"no {RT} or {DOCKER} in the serving process, the audit's environment, the serving "
            "configs or the policy ([driver] visible_devices): every exposed device is visible"
        )
    info = ctx.fact(NPU_SMI).info
    exposed = info.chip_count if info is not None and info.chips else len(grant.given)
    need, why = needed_devices(ctx)
    findings: list[Outcome] = []
    for m in masks:
        if m.variable == RT:
            findings += rt_findings(m, exposed, need, why)
        else:
            findings += docker_findings(m, grant)
    evidence = [
        Evidence(
            "config",
            m.source,
            f"{m.variable}={m.raw}",
            {**m.to_dict(), "exposed": exposed, "needed": need},
        )
        for m in masks
    ]
    if not findings and unread:
        return Outcome(
            Status.ERROR,
            f"{unread}: the masks judged may not be the serving process's own",
            evidence,
        )
    if not findings:
        shown = "; ".join(f"{m.variable}={m.raw}" for m in masks)
        extra = f", enough for {why}" if need else ""
        return passed(
            f"{shown}: ascending, no duplicates, within {exposed} devices{extra}", evidence
        )
    bad = sorted(findings, key=lambda f: f.status.value != "FAIL")
    return Outcome(bad[0].status, "; ".join(f.summary for f in bad), evidence)
