"""Fake Atlas nodes for tests, examples and benchmarks: npu-smi outputs written in the real formats.

The text layouts follow the real outputs in ../shared/fixtures (npu_smi_info, npu_smi_board); the
values are invented. Used with fakes/standins.py (commands on PATH) and fakes/sysroot.py (sysfs).
"""

from __future__ import annotations

from dataclasses import dataclass, field

BUS_IDS_910B = (
    "0000:C1:00.0",
    "0000:C2:00.0",
    "0000:81:00.0",
    "0000:82:00.0",
    "0000:01:00.0",
    "0000:02:00.0",
    "0000:41:00.0",
    "0000:42:00.0",
)
AFFINITY_910B = ("144-167", "144-167", "96-119", "96-119", "0-23", "0-23", "48-71", "48-71")


@dataclass
class FakeNpu:
    """One 910B-class NPU as npu-smi would show it."""

    npu_id: int
    bus_id: str
    name: str = "910B3"
    health: str = "OK"
    firmware: str = "7.5.0.1.129"
    software: str = "24.1.rc3"
    error_code: str = "NA"
    hbm_used: int = 3314
    hbm_total: int = 65536
    processes: list[tuple[int, str, int]] = field(default_factory=list)  # pid, name, MB


def atlas_800_a2(count: int = 8, **overrides: object) -> list[FakeNpu]:
    """An Atlas 800 A2 with `count` 910B3 NPUs on the usual bus ids."""
    return [FakeNpu(i, BUS_IDS_910B[i % 8], **overrides) for i in range(count)]  # type: ignore[arg-type]


def _row(*cells: tuple[str, int]) -> str:
    return "|" + "|".join(f" {text:<{width - 1}}" for text, width in cells) + "|"


def npu_smi_info(npus: list[FakeNpu], version: str = "24.1.rc3") -> str:
    """`npu-smi info` in the 23.0 – 25.5 910B layout."""
    w1, w2, w3 = 27, 15, 52
    sep_eq = "+" + "=" * w1 + "+" + "=" * w2 + "+" + "=" * w3 + "+"
    sep = "+" + "-" * w1 + "+" + "-" * w2 + "+" + "-" * w3 + "+"
    total = w1 + w2 + w3 + 2
    head = f" npu-smi {version:<24}Version: {version}"
    lines = [
        "+" + "-" * total + "+",
        "|" + head.ljust(total) + "|",
        sep,
        _row(
            ("NPU   Name", w1),
            ("Health", w2),
            ("Power(W)    Temp(C)           Hugepages-Usage(page)", w3),
        ),
        _row(
            ("Chip", w1),
            ("Bus-Id", w2),
            ("AICore(%)   Memory-Usage(MB)  HBM-Usage(MB)", w3),
        ),
        sep_eq,
    ]
    for n in npus:
        lines.append(
            _row(
                (f"{n.npu_id:<5} {n.name}", w1),
                (n.health, w2),
                (f"{'95.3':<11} {'41':<17} {'0    / 0':<21}", w3),
            )
        )
        lines.append(
            _row(
                ("0", w1),
                (n.bus_id, w2),
                (f"{'0':<11} {'0    / 0':<17} {f'{n.hbm_used} / {n.hbm_total}':<21}", w3),
            )
        )
        lines.append(sep_eq)
    lines += [
        sep,
        _row(
            ("NPU     Chip", w1),
            ("Process id", w2),
            ("Process name             | Process memory(MB)", w3),
        ),
        sep_eq,
    ]
    for n in npus:
        if not n.processes:
            lines.append(
                _row(
                    (f"No running processes found in NPU {n.npu_id}", total),
                )
            )
        for pid, pname, mem in n.processes:
            lines.append(
                _row((f"{n.npu_id:<7} 0", w1), (str(pid), w2), (f"{pname:<24} | {mem}", w3))
            )
        lines.append(sep_eq)
    return "\n".join(lines) + "\n"


def npu_smi_board(n: FakeNpu) -> str:
    """`npu-smi info -t board -i N`."""
    return (
        f"NPU ID                         : {n.npu_id}\n"
        f"Software Version               : {n.software}\n"
        f"Firmware Version               : {n.firmware}\n"
        "Compatibility                  : OK\n"
        "Board ID                       : 0x02\n"
        "PCB ID                         : A\n"
        "BOM ID                         : 1\n"
        f"PCIe Bus Info                  : {n.bus_id}\n"
        "Slot ID                        : 0\n"
        "Class ID                       : NA\n"
        "PCI Vendor ID                  : 0x19e5\n"
        "PCI Device ID                  : 0xD802\n"
        "Subsystem Vendor ID            : 0x0200\n"
        "Subsystem Device ID            : 0x0100\n"
        "Chip Count                     : 1\n"
    )


def npu_smi_health(n: FakeNpu) -> str:
    """`npu-smi info -t health -i N`."""
    return (
        f"\tHealth Status                  : {n.health}\n"
        f"\tError Code                     : {n.error_code}\n"
        "\tError Information              : NA\n"
    )


def npu_smi_topo(npus: list[FakeNpu], affinity: tuple[str, ...] = AFFINITY_910B) -> str:
    """`npu-smi info -t topo`: full HCCS mesh with CPU affinity."""
    names = [f"NPU{n.npu_id}" for n in npus]
    lines = ["\t   " + "".join(f"{x:<11}" for x in names) + "CPU Affinity"]
    for i, a in enumerate(names):
        cells = "".join(f"{'X' if i == j else 'HCCS':<11}" for j in range(len(names)))
        lines.append(f"{a:<11}{cells}{affinity[i % len(affinity)]}")
    lines += [
        "",
        "Legend:",
        "",
        "  X    = Self",
        "  SYS  = Path traversing PCIe and NUMA nodes. "
        "Nodes are connected through SMP, such as QPI, UPI.",
        "  PHB  = Path traversing PCIe and the PCIe host bridge of a CPU.",
        "  PIX  = Path traversing a single PCIe switch",
        "  PXB  = Path traversing multiple PCIe switches",
        "  HCCS = Connection traversing HCCS.",
        "  NA   = Unknown relationship.",
    ]
    return "\n".join(lines) + "\n"


def npu_smi_outputs(npus: list[FakeNpu], version: str = "24.1.rc3") -> dict[str, str]:
    """Every npu-smi answer the driver layer asks for, keyed by argv[1:] joined by spaces."""
    out = {"info": npu_smi_info(npus, version), "info -t topo": npu_smi_topo(npus)}
    for n in npus:
        out[f"info -t board -i {n.npu_id}"] = npu_smi_board(n)
        out[f"info -t health -i {n.npu_id}"] = npu_smi_health(n)
    return out


def npu_smi_info_310p(
    cards: list[tuple[int, str, list[tuple[int, int, int]]]],
    version: str = "25.3.rc1",
    processes: list[tuple[int, int, int, str, int]] = (),  # type: ignore[assignment]
) -> str:
    """`npu-smi info` in the 310P layout (Atlas 300I Duo: chips 0 and 1 behind one bus id).

    cards: (npu id, bus id, [(chip, logical device, memory used MB)]); processes: (npu, chip,
    pid, name, MB). The layout is the one of the 25.3.rc1 table in vllm-ascend issue 6063.
    """
    sep = "+" + "-" * 31 + "+" + "-" * 17 + "+" + "-" * 54 + "+"
    eq = sep.replace("-", "=")
    head = f" npu-smi {version:<40}Version: {version}"
    lines = [
        "+" + "-" * 104 + "+",
        "|" + head.ljust(104) + "|",
        sep,
        f"| {'NPU     Name':<30}| {'Health':<16}| "
        f"{'Power(W)     Temp(C)':<31}Hugepages-Usage(page) |",
        f"| {'Chip    Device':<30}| {'Bus-Id':<16}| {'AICore(%)    Memory-Usage(MB)':<53}|",
        eq,
    ]
    for npu, bus, chips in cards:
        for i, (chip, device, used) in enumerate(chips):
            lines.append(
                f"| {npu:<8}{'310P3':<22}| {'OK':<16}| {'NA':<13}{'80':<18}{'0     / 0':<22}|"
            )
            lines.append(f"| {chip:<8}{device:<22}| {bus:<16}| {'0':<13}{f'{used} / 44278':<40}|")
            lines.append(sep if i + 1 < len(chips) else eq)
    lines += [
        sep,
        f"| {'NPU     Chip':<30}| {'Process id':<16}| "
        f"{'Process name':<25}| {'Process memory(MB)':<26}|",
        eq,
    ]
    for npu, _bus, _chips in cards:
        mine = [p for p in processes if p[0] == npu]
        if not mine:
            lines.append("| " + f"No running processes found in NPU {npu}".ljust(103) + "|")
        for _n, chip, pid, name, mem in mine:
            lines.append(f"| {npu:<8}{chip:<22}| {pid:<16}| {name:<25}| {mem:<26}|")
        lines.append(eq)
    return "\n".join(lines) + "\n"


def npu_smi_board_310p(npu_id: int, bus_id: str, software: str, firmware: str) -> str:
    """`npu-smi info -t board -i N` of an Atlas 300I Duo card (two chips behind one bus id)."""
    return (
        f"NPU ID                         : {npu_id}\n"
        "Product Name                   : IT21PD2G10\n"
        "Model                          : NA\n"
        "Manufacturer                   : Huawei\n"
        f"Software Version               : {software}\n"
        f"Firmware Version               : {firmware}\n"
        "Compatibility                  : OK\n"
        f"PCIe Bus Info                  : {bus_id}\n"
        "PCI Vendor ID                  : 0x19E5\n"
        "PCI Device ID                  : 0xD500\n"
        "Subsystem Vendor ID            : 0x0200\n"
        "Subsystem Device ID            : 0x0110\n"
        "Chip Count                     : 2\n"
    )
