"""Host tuning gatherer: CPU governor, virtualisation, memory knobs, limits, kernel (sysroot-aware).

Every value is read through the Host (so --sysroot and snapshots work); an absent file is kept as
a FileRead with its error, so a check can say "could not read" instead of guessing.
"""

from __future__ import annotations

import re
from typing import Any

from ascend_audit.context import Context, gatherer
from ascend_audit.facts.host_tuning import (
    HOST_TUNING,
    HostTuning,
    Limits,
    parse_limits_conf,
    parse_proc_limits,
    thp_mode,
)
from ascend_audit.host.base import ProcessInfo

LIMITS_CONF = "/etc/security/limits.conf"
LIMITS_D = "/etc/security/limits.d"
_CPU_RE = re.compile(r"^cpu(\d{1,5})$")


def _limits(ctx: Context, proc: ProcessInfo | None) -> Limits | None:
    if proc is not None:
        path = f"/proc/{proc.pid}/limits"
        read = ctx.host.read_text(path)
        if read.ok:
            nofile, memlock, lines = parse_proc_limits(read.text or "")
            return Limits(nofile, memlock, path, tuple(lines))
    user = ctx.policy.get("driver.service_user") or (proc.username if proc else None)
    texts = []
    main = ctx.host.read_text(LIMITS_CONF)
    if main.ok:
        texts.append(main.text or "")
    extra = sorted(n for n in ctx.host.listdir(LIMITS_D) or [] if n.endswith(".conf"))
    for name in extra:
        r = ctx.host.read_text(f"{LIMITS_D}/{name}")
        if r.ok:
            texts.append(r.text or "")
    if not texts:
        return None
    nofile, memlock, lines = parse_limits_conf(texts, user)
    where = f"{LIMITS_CONF}" + (f" + {len(extra)} file(s) in {LIMITS_D}" if extra else "")
    return Limits(nofile, memlock, f"{where} for user {user or '*'}", tuple(lines))


PATHS = (
    "/sys/class/dmi/id/sys_vendor",
    "/sys/class/dmi/id/product_name",
    "/proc/cpuinfo",
    "/sys/kernel/mm/transparent_hugepage/enabled",
    "/proc/sys/kernel/numa_balancing",
    "/proc/sys/vm/overcommit_memory",
    "/proc/swaps",
    "/proc/meminfo",
    "/proc/sys/kernel/osrelease",
)


@gatherer(HOST_TUNING, "driver")
def host_tuning(ctx: Context) -> HostTuning:
    """Read the tuning files, every CPU's governor, and the service's limits."""
    from ascend_audit.gather.framework import serving_processes

    reads = {p: ctx.host.read_text(p) for p in PATHS}
    cpus = sorted(
        int(m.group(1))
        for n in ctx.host.listdir("/sys/devices/system/cpu") or []
        if (m := _CPU_RE.match(n))
    )
    governors: dict[int, str] = {}
    for cpu in cpus:
        r = ctx.host.read_text(f"/sys/devices/system/cpu/cpu{cpu}/cpufreq/scaling_governor")
        if r.ok and (r.text or "").strip():
            governors[cpu] = (r.text or "").strip()
    procs = serving_processes(ctx)
    proc = procs[0] if procs else None
    return HostTuning(governors, len(cpus), reads, _limits(ctx, proc), proc)


def inventory(facts: dict[str, Any]) -> dict[str, Any]:
    """Kernel release and THP mode, when read."""
    t: HostTuning | None = facts.get("host_tuning")
    if t is None:
        return {}
    return {
        "host_tuning": {
            "kernel": t.text("/proc/sys/kernel/osrelease"),
            "transparent_hugepage": thp_mode(t.text("/sys/kernel/mm/transparent_hugepage/enabled")),
            "governors": sorted(set(t.governors.values())),
        }
    }


def __getattr__(name: str) -> Any:
    """Names that moved to facts/host_tuning.py (issue 15); kept for this round's branches."""
    from ascend_audit.facts import host_tuning

    if name in ("UNLIMITED", "meminfo_kb", "release_tuple", "swap_devices", "virtual_machine"):
        return getattr(host_tuning, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
