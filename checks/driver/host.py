"""Host tuning: CPU frequency and virtualisation, memory knobs, service limits, CPU affinity."""

from __future__ import annotations

from ascend_audit.context import Context
from ascend_audit.facts.driver_scan import NPU_SMI, PCI
from ascend_audit.facts.host_tuning import (
    HOST_TUNING,
    UNLIMITED,
    HostTuning,
    meminfo_kb,
    release_tuple,
    swap_devices,
    thp_mode,
    virtual_machine,
)
from ascend_audit.facts.sysfs import format_cpulist
from ascend_audit.facts.topology import NUMA
from ascend_audit.model import Evidence, Outcome, passed, skip, warn, worst
from ascend_audit.registry import check

GOVERNORS = "/sys/devices/system/cpu/cpu*/cpufreq/scaling_governor"


def _off(name: str, found: object, wanted: object, why: str) -> Outcome:
    return warn(f"{name} is {found}, want {wanted}: {why}")


def _files(t: HostTuning, paths: tuple[str, ...]) -> list[Evidence]:
    return [t.reads[p].evidence(excerpt=(t.reads[p].text or "")[:400]) for p in paths]


def _unread(t: HostTuning, paths: tuple[str, ...]) -> list[str]:
    return [p for p in paths if not t.reads[p].ok]


@check("DRV-HOST-001")
def cpu_and_platform(ctx: Context) -> Outcome:
    t = ctx.fact(HOST_TUNING)
    paths = (
        "/sys/class/dmi/id/sys_vendor",
        "/sys/class/dmi/id/product_name",
        "/proc/sys/kernel/osrelease",
    )
    vm, vm_how = virtual_machine(t)
    release = t.text("/proc/sys/kernel/osrelease")
    if not t.governors and vm is None and release is None:
        return skip("could not read cpufreq governors, DMI, /proc/cpuinfo or the kernel release")
    findings: list[Outcome] = []
    want = ctx.policy["host.cpu_governor"]
    off = {c: g for c, g in t.governors.items() if g != want}
    if off:
        kinds = ", ".join(sorted(set(off.values())))
        findings.append(
            _off(
                f"CPU governor of {len(off)}/{len(t.governors)} CPUs",
                kinds,
                want,
                "lower clocks slow the host-side operator launch (host bound)",
            )
        )
    if vm and not ctx.policy["host.allow_virtual_machine"]:
        findings.append(
            warn(
                f"running in a virtual machine ({vm_how}): vCPU count and clocks "
                "differ from bare metal and slow operator launch"
            )
        )
    minimum = ctx.policy["host.min_kernel_release"]
    if release and release_tuple(release) < release_tuple(minimum):
        findings.append(
            _off(
                "kernel release",
                release,
                f">= {minimum}",
                "newer kernels dispatch to the NPU faster (less host bound)",
            )
        )
    gov = ", ".join(sorted(set(t.governors.values()))) or "no cpufreq (firmware-managed)"
    gov_ev = Evidence("file", GOVERNORS, gov, {"cpus": t.cpus_listed})
    ev = [*_files(t, paths), gov_ev]
    summary = f"governor {gov}, {'VM' if vm else 'bare metal' if vm is False else 'platform ?'}, "
    out = worst(findings, summary + f"kernel {release or '?'}")
    out.evidence = ev
    return out


@check("DRV-HOST-002")
def memory_settings(ctx: Context) -> Outcome:
    t = ctx.fact(HOST_TUNING)
    paths = (
        "/sys/kernel/mm/transparent_hugepage/enabled",
        "/proc/sys/kernel/numa_balancing",
        "/proc/sys/vm/overcommit_memory",
        "/proc/swaps",
    )
    if len(_unread(t, paths)) == len(paths):
        return skip("could not read THP, numa_balancing, overcommit_memory or /proc/swaps")
    p = ctx.policy
    findings: list[Outcome] = []
    thp = thp_mode(t.text(paths[0]))
    if thp and p["host.transparent_hugepage"] not in ("any", thp):
        findings.append(
            _off(
                "transparent hugepages",
                thp,
                p["host.transparent_hugepage"],
                "huge pages keep host-side throughput stable",
            )
        )
    nb = t.text(paths[1])
    wanted_nb = {"off": "0", "on": "1"}.get(p["host.numa_balancing"])
    if nb is not None and wanted_nb is not None and (nb != "0") != (wanted_nb != "0"):
        findings.append(
            _off(
                "kernel.numa_balancing",
                nb,
                wanted_nb,
                "automatic page migration stalls pinned serving threads",
            )
        )
    oc = t.text(paths[2])
    if oc is not None and p["host.overcommit_memory"] not in ("any", oc):
        findings.append(
            _off(
                "vm.overcommit_memory",
                oc,
                p["host.overcommit_memory"],
                "the policy's memory-overcommit mode",
            )
        )
    swaps = swap_devices(t.text(paths[3]))
    total = meminfo_kb(t.text("/proc/meminfo"), "SwapTotal")
    if swaps and not p["host.allow_swap"]:
        findings.append(
            _off(
                "swap",
                f"on ({', '.join(swaps)}, {total or '?'} kB)",
                "off",
                "a swapped-out serving process stalls token generation",
            )
        )
    missing = _unread(t, paths)
    note = f" ({len(missing)} unreadable)" if missing else ""
    out = worst(
        findings,
        f"THP {thp or '?'}, numa_balancing {nb or '?'}, overcommit "
        f"{oc or '?'}, swap {'on' if swaps else 'off'}{note}",
    )
    out.evidence = _files(t, paths)
    return out


def _show(v: int | None, unit: str = "") -> str:
    return "unlimited" if v == UNLIMITED else "unknown" if v is None else f"{v}{unit}"


@check("DRV-HOST-003")
def service_limits(ctx: Context) -> Outcome:
    lim = ctx.fact(HOST_TUNING).limits
    if lim is None:
        return skip(
            "could not read /proc/<pid>/limits (no serving process) or /etc/security/limits.conf"
        )
    ev = [Evidence("file", lim.source, "\n".join(lim.lines) or "(no nofile/memlock entries)")]
    findings: list[Outcome] = []
    want = ctx.policy["host.min_nofile"]
    if lim.nofile is None:
        findings.append(
            warn(
                f"no open-file limit set in {lim.source}: the default (often 1024) "
                f"applies, want >= {want}"
            )
        )
    elif lim.nofile != UNLIMITED and lim.nofile < want:
        findings.append(
            _off(
                "open-file limit (nofile)",
                lim.nofile,
                f">= {want}",
                "HCCL, the tokenizer and many shards open thousands of files",
            )
        )
    if ctx.policy["host.memlock_unlimited"] and lim.memlock_bytes != UNLIMITED:
        findings.append(
            _off(
                "locked-memory limit (memlock)",
                _show(lim.memlock_bytes, " B"),
                "unlimited",
                "RDMA (HCCL RoCE) pins buffers in host memory",
            )
        )
    out = worst(
        findings, f"nofile {_show(lim.nofile)}, memlock {_show(lim.memlock_bytes)} ({lim.source})"
    )
    out.evidence = ev
    return out


def npu_nodes(ctx: Context, devices: list[int]) -> dict[int, int | None]:
    """NUMA node of each device index (ASCEND_RT_VISIBLE_DEVICES ids) via npu-smi bus ids + PCI."""
    run, pci = ctx.fact(NPU_SMI), ctx.fact(PCI)
    chips = run.info.chips if run.info is not None else ()
    by_bdf = {n.bdf.lower(): n.numa_node for n in pci.npus}
    out: dict[int, int | None] = {}
    for d in devices:
        chip = (
            next((c for c in chips if c.logic_id == d), None)
            or next((c for c in chips if c.phy_id == d), None)
            or next((c for c in chips if c.npu_id == d and c.chip_id == 0), None)
        )
        out[d] = by_bdf.get((chip.bus_id or "").lower()) if chip else None
    return out


@check("DRV-HOST-004")
def serving_affinity(ctx: Context) -> Outcome:
    t = ctx.fact(HOST_TUNING)
    proc = t.process
    if proc is None:
        return skip("no serving process running: nothing to compare CPU affinity against")
    if not proc.cpu_affinity:
        return skip(f"CPU affinity of process {proc.pid} unreadable")
    vis = proc.environ.get("ASCEND_RT_VISIBLE_DEVICES", "")
    numa = ctx.fact(NUMA)
    try:
        devices = [int(x) for x in vis.split(",") if x.strip()] if vis else None
    except ValueError:
        devices = None
    if devices is None:
        info = ctx.fact(NPU_SMI).info
        chips = info.chips if info is not None else ()
        devices = sorted({c.logic_id if c.logic_id is not None else c.npu_id for c in chips})
    nodes = npu_nodes(ctx, devices)
    known = {n for n in nodes.values() if n is not None}
    aff = format_cpulist(proc.cpu_affinity)
    text = f"cpu_affinity {aff}\nASCEND_RT_VISIBLE_DEVICES={vis or '(unset: all)'}"
    values = {"npu_numa_nodes": {str(k): v for k, v in nodes.items()}}
    ev = [Evidence("config", f"process {proc.pid}", text, values)]
    if not known:
        return skip("NUMA node of the service's NPUs unknown (npu-smi / PCI facts)", ev)
    near = set().union(*(set(numa.cpus_of(n) or ()) for n in known))
    far = sorted(set(proc.cpu_affinity) - near)
    if not near:
        return skip("CPUs of the NPUs' NUMA nodes unknown", ev)
    if far:
        return warn(
            f"process {proc.pid} may run on {len(far)} CPUs outside NUMA node(s) "
            f"{sorted(known)} of its NPUs {devices} (e.g. {format_cpulist(far[:16])})",
            ev,
        )
    return passed(f"process {proc.pid} is pinned to NUMA node(s) {sorted(known)} of its NPUs", ev)
