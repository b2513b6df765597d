"""Parsers for npu-smi outputs: the `info` table, key/value blocks, `-m` mapping, topology."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from ascend_audit.facts.common import Problems as _Problems

__all__ = [
    "KvBlock",
    "MappingRow",
    "NpuChip",
    "NpuMapping",
    "NpuProcess",
    "NpuSmiInfo",
    "NpuSmiKv",
    "NpuTopo",
    "TopoLink",
    "normalize_bus_id",
    "parse_affinity",
    "parse_info",
    "parse_kv",
    "parse_mapping",
    "parse_topo",
]

_NA = frozenset({"", "NA", "N/A", "-", "--"})
_BUS_RE = re.compile(r"^(?:([0-9a-f]{4,8}):)?([0-9a-f]{2}):([0-9a-f]{2})\.([0-7])$")
_HEADER_RE = re.compile(r"npu-smi\s+(\S+)\s+Version:\s*(\S+)")
_IDLE_RE = re.compile(r"No running processes found in NPU\s+(-?\d+)")
_NPU_LABEL_RE = re.compile(r"^NPU(\d+)$")
_RANGE_RE = re.compile(r"^(\d{1,7})(?:-(\d{1,7}))?$")
_INT_RE = re.compile(r"^-?\d{1,18}$")
_FLOAT_RE = re.compile(r"^-?\d{1,12}(?:\.\d{1,6})?$")


def _lines(text: str) -> list[str]:
    """Split decoded text into lines, dropping NULs and CRs."""
    if not isinstance(text, str):
        return []
    return text.replace("\x00", "").replace("\r\n", "\n").replace("\r", "\n").split("\n")


def _to_int(value: str) -> int | None:
    v = value.strip()
    return int(v) if _INT_RE.match(v) else None


def _to_float(value: str) -> float | None:
    v = value.strip()
    return float(v) if _FLOAT_RE.match(v) else None


def normalize_bus_id(value: str) -> str | None:
    """Return a PCI address as `dddd:bb:dd.f` in lower case (domain added if absent), or None."""
    m = _BUS_RE.match(value.strip().lower())
    if not m:
        return None
    domain = (m.group(1) or "0000").rjust(4, "0")
    return f"{domain}:{m.group(2)}:{m.group(3)}.{m.group(4)}"


# --------------------------------------------------------------------------- npu-smi info


@dataclass(frozen=True)
class NpuChip:
    """One chip block of the `npu-smi info` table."""

    npu_id: int
    chip_id: int
    name: str
    health: str
    phy_id: int | None = None
    logic_id: int | None = None
    power_w: float | None = None
    temperature_c: int | None = None
    hugepages_used: int | None = None
    hugepages_total: int | None = None
    bus_id: str | None = None
    aicore_util: int | None = None
    memory_used_mb: int | None = None
    memory_total_mb: int | None = None
    hbm_used_mb: int | None = None
    hbm_total_mb: int | None = None
    line: int = 0

    def to_dict(self) -> dict[str, Any]:
        """JSON-serialisable form."""
        return {k: getattr(self, k) for k in self.__dataclass_fields__}


@dataclass(frozen=True)
class NpuProcess:
    """One row of the process table of `npu-smi info`."""

    npu_id: int
    chip_id: int | None
    pid: int | None
    name: str
    memory_mb: int | None
    container_pid: int | None = None
    line: int = 0

    def to_dict(self) -> dict[str, Any]:
        """JSON-serialisable form."""
        return {k: getattr(self, k) for k in self.__dataclass_fields__}


@dataclass(frozen=True)
class NpuSmiInfo:
    """What `npu-smi info` printed: versions, chips, processes, and what could not be read."""

    tool_version: str | None = None
    driver_version: str | None = None
    layout: str | None = None
    chips: tuple[NpuChip, ...] = ()
    processes: tuple[NpuProcess, ...] = ()
    idle_npus: tuple[int, ...] = ()
    has_process_table: bool = False
    has_container_pid: bool = False
    problems: tuple[str, ...] = ()

    @property
    def npus(self) -> tuple[int, ...]:
        """Distinct NPU ids in table order."""
        return tuple(dict.fromkeys(c.npu_id for c in self.chips))

    @property
    def chip_count(self) -> int:
        """Number of chip blocks read."""
        return len(self.chips)

    @property
    def names(self) -> tuple[str, ...]:
        """Distinct chip names in table order."""
        return tuple(dict.fromkeys(c.name for c in self.chips))

    @property
    def ok(self) -> bool:
        """True when at least one chip was read and no problems were found."""
        return bool(self.chips) and not self.problems

    def chips_of(self, npu_id: int) -> tuple[NpuChip, ...]:
        """The chips of one NPU."""
        return tuple(c for c in self.chips if c.npu_id == npu_id)

    def chip(self, npu_id: int, chip_id: int) -> NpuChip | None:
        """One chip by NPU and chip id."""
        for c in self.chips:
            if c.npu_id == npu_id and c.chip_id == chip_id:
                return c
        return None

    def processes_on(self, npu_id: int) -> tuple[NpuProcess, ...]:
        """The processes the table lists for one NPU."""
        return tuple(p for p in self.processes if p.npu_id == npu_id)

    def to_dict(self) -> dict[str, Any]:
        """JSON-serialisable form."""
        return {
            "tool_version": self.tool_version,
            "driver_version": self.driver_version,
            "layout": self.layout,
            "npus": list(self.npus),
            "chips": [c.to_dict() for c in self.chips],
            "processes": [p.to_dict() for p in self.processes],
            "idle_npus": list(self.idle_npus),
            "has_process_table": self.has_process_table,
            "has_container_pid": self.has_container_pid,
            "problems": list(self.problems),
        }


def _cells(line: str) -> list[str]:
    """Split a `| a | b |` row into stripped cells."""
    s = line.strip()
    if s.startswith("|"):
        s = s[1:]
    if s.endswith("|"):
        s = s[:-1]
    return [c.strip() for c in s.split("|")]


def _metric_names(cell: str) -> list[str]:
    """Column names of a metrics header cell; a name ends at `)` so `NPU Util(%)` stays one."""
    names: list[str] = []
    pending: list[str] = []
    for word in cell.split():
        pending.append(word)
        if word.endswith(")"):
            names.append(" ".join(pending))
            pending = []
    if pending:
        names.append(" ".join(pending))
    return names


def _metric_values(cell: str) -> list[str]:
    """Values of a metrics cell; `a / b`, `a/ b`, `a /b` and `a/b` each count as one value."""
    out: list[str] = []
    join_next = False
    for tok in cell.split():
        if join_next and out:
            out[-1] += tok
            join_next = tok.endswith("/")
            continue
        if tok.startswith("/") and out:
            out[-1] += tok
            join_next = tok.endswith("/")
            continue
        out.append(tok)
        join_next = tok.endswith("/")
    return out


def _metric_key(name: str) -> str | None:
    n = name.lower()
    if "hbm" in n:
        return "hbm"
    if "hugepage" in n:
        return "hugepages"
    if "memory" in n:
        return "memory"
    if "power" in n:
        return "power"
    if "temp" in n:
        return "temp"
    if "aicore" in n or "util" in n:
        return "aicore"
    return None


_DEFAULT_TOP = ["power", "temp", "hugepages"]
_DEFAULT_BOTTOM = ["aicore", "memory", "hbm"]


def _pair(value: str) -> tuple[int | None, int | None] | None:
    if "/" not in value:
        return None
    a, _, b = value.partition("/")
    return _to_int(a), _to_int(b)


class _InfoLayout:
    """Where each field sits, read from the two header rows (or assumed when they are missing)."""

    def __init__(self) -> None:
        self.id_cell = 0  # cell holding "NPU  Name" or "NPU ID"
        self.name_cell: int | None = None  # separate Name cell (950 layout)
        self.health_cell = 1
        self.top_cell = 2
        self.top_keys: list[str | None] = list(_DEFAULT_TOP)
        self.chip_cell = 0
        self.bus_cell = 1
        self.bottom_cell = 2
        self.bottom_keys: list[str | None] = list(_DEFAULT_BOTTOM)
        self.second_id: str | None = None  # "phy_id", "logic_id" or None
        self.has_chip = True
        self.name = "910"

    def read_top(self, cells: list[str]) -> None:
        for i, c in enumerate(cells):
            low = c.lower()
            if "health" in low:
                self.health_cell = i
            elif "power" in low or "temp" in low:
                self.top_cell = i
                self.top_keys = [_metric_key(n) for n in _metric_names(c)]
            elif low.startswith("npu id"):
                self.id_cell = i
            elif low == "name":
                self.name_cell = i
            elif low.startswith("npu"):
                self.id_cell = i
        if self.name_cell is not None:
            self.name = "950"

    def read_bottom(self, cells: list[str]) -> None:
        self.has_chip = False
        for i, c in enumerate(cells):
            low = c.lower()
            if "bus" in low:
                self.bus_cell = i
            elif "memory" in low or "aicore" in low or "util" in low:
                self.bottom_cell = i
                self.bottom_keys = [_metric_key(n) for n in _metric_names(c)]
            elif low.startswith("chip"):
                self.chip_cell = i
                self.has_chip = True
                words = low.split()
                if len(words) > 1 and words[1].startswith("phy"):
                    self.second_id = "phy_id"
                    self.name = "a3"
                elif len(words) > 1 and words[1].startswith(("device", "logic")):
                    self.second_id = "logic_id"
                    self.name = "310p"


def _looks_like_bottom(cells: list[str], lay: _InfoLayout) -> bool:
    if lay.bus_cell < len(cells):
        bus = cells[lay.bus_cell]
        return ":" in bus or bus in _NA
    return False


def _read_metrics(
    cell: str, keys: list[str | None], lineno: int, probs: _Problems
) -> dict[str, str]:
    values = _metric_values(cell)
    if len(values) != len(keys):
        probs.add(f"line {lineno}: expected {len(keys)} values in {cell!r}, got {len(values)}")
    return {k: v for k, v in zip(keys, values) if k}


def _build_chip(
    top: tuple[int, list[str]], bottom: tuple[int, list[str]], lay: _InfoLayout, probs: _Problems
) -> NpuChip | None:
    tline, tcells = top
    bline, bcells = bottom

    def cell(cells: list[str], i: int | None) -> str:
        return cells[i] if i is not None and i < len(cells) else ""

    id_words = cell(tcells, lay.id_cell).split()
    npu_id = _to_int(id_words[0]) if id_words else None
    if npu_id is None:
        probs.add(f"line {tline}: no NPU id in {cell(tcells, lay.id_cell)!r}")
        return None
    name = cell(tcells, lay.name_cell) if lay.name_cell is not None else " ".join(id_words[1:])
    health = cell(tcells, lay.health_cell)
    top = _read_metrics(cell(tcells, lay.top_cell), lay.top_keys, tline, probs)
    bot = _read_metrics(cell(bcells, lay.bottom_cell), lay.bottom_keys, bline, probs)

    chip_words = cell(bcells, lay.chip_cell).split() if lay.has_chip else []
    chip_id = _to_int(chip_words[0]) if chip_words else None
    if lay.has_chip and chip_id is None:
        probs.add(f"line {bline}: no chip id in {cell(bcells, lay.chip_cell)!r}")
    second = _to_int(chip_words[1]) if len(chip_words) > 1 else None
    if lay.second_id and second is None:
        probs.add(f"line {bline}: no {lay.second_id} in {cell(bcells, lay.chip_cell)!r}")

    raw_bus = cell(bcells, lay.bus_cell)
    bus = normalize_bus_id(raw_bus)
    if bus is None and raw_bus not in _NA:
        probs.add(f"line {bline}: unreadable bus id {raw_bus!r}")

    def num(src: dict[str, str], key: str, conv: Any, lineno: int) -> Any:
        v = src.get(key)
        if v is None or v in _NA:
            return None
        out = conv(v)
        if out is None:
            probs.add(f"line {lineno}: unreadable {key} value {v!r}")
        return out

    def pair(src: dict[str, str], key: str, lineno: int) -> tuple[int | None, int | None]:
        v = src.get(key)
        if v is None or v in _NA:
            return None, None
        p = _pair(v)
        if p is None or None in p:
            probs.add(f"line {lineno}: unreadable {key} value {v!r}")
            return p or (None, None)
        return p

    temp = num(top, "temp", _to_float, tline)
    aicore = num(bot, "aicore", _to_float, bline)
    hp = pair(top, "hugepages", tline)
    mem = pair(bot, "memory", bline)
    hbm = pair(bot, "hbm", bline)
    return NpuChip(
        npu_id=npu_id,
        chip_id=chip_id if chip_id is not None else 0,
        name=name,
        health=health,
        phy_id=second if lay.second_id == "phy_id" else None,
        logic_id=second if lay.second_id == "logic_id" else None,
        power_w=num(top, "power", _to_float, tline),
        temperature_c=int(temp) if temp is not None else None,
        hugepages_used=hp[0],
        hugepages_total=hp[1],
        bus_id=bus,
        aicore_util=int(aicore) if aicore is not None else None,
        memory_used_mb=mem[0],
        memory_total_mb=mem[1],
        hbm_used_mb=hbm[0],
        hbm_total_mb=hbm[1],
        line=tline,
    )


class _ProcLayout:
    def __init__(self, cells: list[str]) -> None:
        self.npu_cell = 0
        self.pid_cell: int | None = None
        self.name_cell: int | None = None
        self.mem_cell: int | None = None
        self.cpid_cell: int | None = None
        self.has_chip = False
        for i, c in enumerate(cells):
            low = c.lower()
            if "container" in low:
                self.cpid_cell = i
            elif "process id" in low:
                self.pid_cell = i
            elif "process name" in low:
                self.name_cell = i
            elif "memory" in low:
                self.mem_cell = i
            elif low.startswith("npu"):
                self.npu_cell = i
                self.has_chip = "chip" in low


def _build_process(
    lineno: int, cells: list[str], lay: _ProcLayout, probs: _Problems
) -> NpuProcess | None:
    def cell(i: int | None) -> str:
        return cells[i] if i is not None and i < len(cells) else ""

    words = cell(lay.npu_cell).split()
    npu_id = _to_int(words[0]) if words else None
    if npu_id is None:
        probs.add(f"line {lineno}: no NPU id in process row {cell(lay.npu_cell)!r}")
        return None
    chip_id = _to_int(words[1]) if lay.has_chip and len(words) > 1 else None
    pid = _to_int(cell(lay.pid_cell))
    if pid is None:
        probs.add(f"line {lineno}: unreadable process id {cell(lay.pid_cell)!r}")
    mem_raw = cell(lay.mem_cell)
    mem = _to_int(mem_raw)
    if mem is None and mem_raw not in _NA:
        probs.add(f"line {lineno}: unreadable process memory {mem_raw!r}")
    return NpuProcess(
        npu_id=npu_id,
        chip_id=chip_id,
        pid=pid,
        name=cell(lay.name_cell),
        memory_mb=mem,
        container_pid=_to_int(cell(lay.cpid_cell)) if lay.cpid_cell is not None else None,
        line=lineno,
    )


def parse_info(text: str) -> NpuSmiInfo:
    """Parse the `npu-smi info` table (22.0 to 26.0, A3 and Ascend 950 layouts)."""
    probs = _Problems()
    tool_version = driver_version = None
    lay = _InfoLayout()
    header_rows = 0  # 0: none seen, 1: first header row seen, 2: both seen
    section = "none"  # "none", "devices", "processes"
    play: _ProcLayout | None = None
    pending: tuple[int, list[str]] | None = None
    chips: list[NpuChip] = []
    procs: list[NpuProcess] = []
    idle: list[int] = []
    has_proc_table = False
    tables = 0

    def flush_pending(lineno: int, why: str) -> None:
        nonlocal pending
        if pending is not None:
            probs.add(f"line {pending[0]}: expected 2-line chip block, {why} at line {lineno}")
            pending = None

    for n, raw in enumerate(_lines(text), 1):
        line = raw.strip()
        if not line:
            continue
        hm = _HEADER_RE.search(line)
        if hm and line.startswith("|"):
            if tables:
                probs.add(f"line {n}: a second npu-smi table starts; only the first is read")
                break
            tables += 1
            tool_version, driver_version = hm.group(1), hm.group(2)
            continue
        if line.startswith("+"):
            if section == "devices" and pending is not None:
                flush_pending(n, "got a separator")
            continue
        if line == "..." or line.startswith("..."):
            flush_pending(n, "got '...'")
            probs.add(f"line {n}: rows elided ('...')")
            continue
        if not line.startswith("|"):
            if section != "none":
                flush_pending(n, "got text outside the table")
            continue
        cells = _cells(line)
        joined = " ".join(cells)
        im = _IDLE_RE.search(joined)
        if im:
            flush_pending(n, "got a process row")
            idle.append(int(im.group(1)))
            section = "processes"
            continue
        low = joined.lower()
        if "process id" in low or "process name" in low:
            flush_pending(n, "got the process header")
            play = _ProcLayout(cells)
            has_proc_table = True
            section = "processes"
            continue
        if "health" in low and ("name" in low or "power" in low):
            lay = _InfoLayout()
            lay.read_top(cells)
            header_rows = 1
            section = "devices"
            continue
        if header_rows == 1 and ("bus-id" in low or "memory-usage" in low):
            lay.read_bottom(cells)
            header_rows = 2
            continue
        if section == "processes" and play is not None:
            p = _build_process(n, cells, play, probs)
            if p is not None:
                procs.append(p)
            continue
        if section == "none":
            if header_rows == 0 and not chips:
                probs.add(f"line {n}: table rows before any header; assuming the 910 layout")
                header_rows = 2
            section = "devices"
        if pending is None:
            if lay.bus_cell < len(cells) and ":" in cells[lay.bus_cell]:
                # a bottom row with no top row before it: the block was cut above
                probs.add(f"line {n}: chip row without its NPU row")
                continue
            pending = (n, cells)
            continue
        if _looks_like_bottom(cells, lay):
            chip = _build_chip(pending, (n, cells), lay, probs)
            if chip is not None:
                chips.append(chip)
            pending = None
        else:
            flush_pending(n, "got another NPU row")
            pending = (n, cells)
    if pending is not None:
        probs.add(f"line {pending[0]}: expected 2-line chip block, input ended")
    if not chips and not procs and not idle:
        probs.add("no npu-smi info table found")

    has_cpid = play is not None and play.cpid_cell is not None
    layout = lay.name if header_rows else None
    if layout and has_cpid:
        layout += "-wide"
    return NpuSmiInfo(
        tool_version=tool_version,
        driver_version=driver_version,
        layout=layout,
        chips=tuple(chips),
        processes=tuple(procs),
        idle_npus=tuple(idle),
        has_process_table=has_proc_table,
        has_container_pid=has_cpid,
        problems=probs.result(),
    )


# --------------------------------------------------------------------------- key/value outputs


@dataclass(frozen=True)
class KvBlock:
    """One `Key : Value` block (one `npu-smi info -t ...` answer)."""

    items: tuple[tuple[str, str], ...]
    command: str | None = None
    line: int = 0

    def get(self, key: str) -> str | None:
        """The value for KEY (case-insensitive); None when absent or `NA`."""
        want = key.strip().lower()
        for k, v in self.items:
            if k.lower() == want:
                return None if v.strip() in _NA else v
        return None

    def has(self, key: str) -> bool:
        """True when KEY is present, even with an `NA` value."""
        want = key.strip().lower()
        return any(k.lower() == want for k, _ in self.items)

    def get_int(self, key: str) -> int | None:
        """The value for KEY as an int (decimal or 0x hex), or None."""
        return _kv_int(self.get(key))

    @property
    def npu_id(self) -> int | None:
        """NPU ID."""
        return self.get_int("NPU ID")

    @property
    def chip_id(self) -> int | None:
        """Chip ID."""
        return self.get_int("Chip ID")

    @property
    def kind(self) -> str:
        """What the block answers: board, chip_board, health, ecc, usages, common, list, other."""
        if self.has("Health Status"):
            return "health"
        if any("bit error count" in k.lower() for k, _ in self.items):
            return "ecc"
        if self.has("Chip Type") or (self.has("Chip ID") and self.has("Firmware Version")):
            return "chip_board"
        if self.has("Software Version") or self.has("PCI Device ID"):
            return "board"
        if self.has("DDR Capacity(MB)") or self.has("HBM Capacity(MB)"):
            return "usages"
        if self.has("Aicore Count") or self.has("Aicore Freq(MHZ)"):
            return "common"
        if self.has("Total Count"):
            return "list"
        return "other"

    def to_dict(self) -> dict[str, Any]:
        """JSON-serialisable form."""
        return {
            "command": self.command,
            "line": self.line,
            "kind": self.kind,
            "items": [[k, v] for k, v in self.items],
        }


def _kv_int(value: str | None) -> int | None:
    if value is None:
        return None
    v = value.strip()
    if v.lower().startswith("0x"):
        try:
            return int(v[2:], 16) if 0 < len(v) - 2 <= 16 else None
        except ValueError:
            return None
    return _to_int(v)


def _hex_id(value: str | None) -> str | None:
    n = _kv_int(value)
    return None if n is None else f"0x{n:04x}"


@dataclass(frozen=True)
class NpuSmiKv:
    """Every key/value block found in an npu-smi output (or a dump of several)."""

    blocks: tuple[KvBlock, ...] = ()
    messages: tuple[str, ...] = ()
    problems: tuple[str, ...] = ()

    def first(self, key: str) -> str | None:
        """The first non-`NA` value of KEY across blocks."""
        for b in self.blocks:
            v = b.get(key)
            if v is not None:
                return v
        return None

    def values(self, key: str) -> tuple[str, ...]:
        """Every non-`NA` value of KEY, in order."""
        return tuple(v for b in self.blocks if (v := b.get(key)) is not None)

    def of_kind(self, kind: str) -> tuple[KvBlock, ...]:
        """Blocks of one kind (see KvBlock.kind)."""
        return tuple(b for b in self.blocks if b.kind == kind)

    @property
    def npu_id(self) -> int | None:
        """The first NPU ID."""
        return _kv_int(self.first("NPU ID"))

    @property
    def firmware_version(self) -> str | None:
        """Firmware Version."""
        return self.first("Firmware Version")

    @property
    def software_version(self) -> str | None:
        """Software Version (the driver)."""
        return self.first("Software Version")

    @property
    def compatibility(self) -> str | None:
        """Compatibility (driver/firmware, `OK` when matched)."""
        return self.first("Compatibility")

    @property
    def chip_name(self) -> str | None:
        """Chip Name (or NPU Name on the 950)."""
        return self.first("Chip Name") or self.first("NPU Name")

    @property
    def chip_type(self) -> str | None:
        """Chip Type."""
        return self.first("Chip Type")

    @property
    def chip_version(self) -> str | None:
        """Chip Version."""
        return self.first("Chip Version")

    @property
    def product_name(self) -> str | None:
        """Product Name."""
        return self.first("Product Name")

    @property
    def serial_number(self) -> str | None:
        """Serial Number."""
        return self.first("Serial Number")

    @property
    def bus_id(self) -> str | None:
        """PCIe Bus Info, normalised."""
        v = self.first("PCIe Bus Info")
        return normalize_bus_id(v) if v else None

    @property
    def pci_vendor_id(self) -> str | None:
        """PCI Vendor ID as lower-case `0x19e5`."""
        return _hex_id(self.first("PCI Vendor ID"))

    @property
    def pci_device_id(self) -> str | None:
        """PCI Device ID as lower-case `0xd802`."""
        return _hex_id(self.first("PCI Device ID"))

    @property
    def board_id(self) -> str | None:
        """Board ID as written."""
        return self.first("Board ID")

    @property
    def chip_count(self) -> int | None:
        """Chip Count."""
        return _kv_int(self.first("Chip Count"))

    @property
    def health(self) -> str | None:
        """Health Status of the first health block."""
        return self.first("Health Status")

    @property
    def health_statuses(self) -> tuple[str, ...]:
        """Every Health Status read, in order."""
        return self.values("Health Status")

    @property
    def error_codes(self) -> tuple[str, ...]:
        """Every error code of every health block, upper-case, `NA` dropped."""
        out: list[str] = []
        for v in self.values("Error Code"):
            out.extend(w.upper() for w in v.replace(",", " ").split() if w not in _NA)
        return tuple(dict.fromkeys(out))

    @property
    def error_information(self) -> str | None:
        """Error Information of the first health block that has it."""
        return self.first("Error Information")

    @property
    def ecc_errors(self) -> dict[str, int]:
        """Non-zero ECC counters by name."""
        out: dict[str, int] = {}
        for b in self.of_kind("ecc"):
            for k, v in b.items:
                n = _kv_int(v)
                if ("err" in k.lower() or "pages" in k.lower()) and n:
                    out[k] = out.get(k, 0) + n
        return out

    def to_dict(self) -> dict[str, Any]:
        """JSON-serialisable form."""
        return {
            "blocks": [b.to_dict() for b in self.blocks],
            "messages": list(self.messages),
            "problems": list(self.problems),
        }


_CMD_HINTS = ("npu-smi", "hccn_tool", "cat ", "lspci", "pip ")
_MESSAGE_HINTS = ("invalid", "error", "fail", "usage:", "not support", "permission", "denied")


def parse_kv(text: str) -> NpuSmiKv:
    """Parse `Key : Value` blocks of `npu-smi info -t board|common|health|ecc|usages|-l`."""
    probs = _Problems()
    blocks: list[KvBlock] = []
    messages: list[str] = []
    items: list[tuple[str, str]] = []
    keys: set[str] = set()
    command: str | None = None
    start = 0

    def close() -> None:
        nonlocal items, keys, start
        if items:
            blocks.append(KvBlock(items=tuple(items), command=command, line=start))
        items, keys = [], set()

    for n, raw in enumerate(_lines(text), 1):
        stripped = raw.strip()
        if not stripped:
            continue
        if stripped.startswith(":") and items:
            # a continuation: the key column is blank, the value belongs to the previous key
            k, v = items[-1]
            items[-1] = (k, f"{v}\n{stripped[1:].strip()}".strip())
            continue
        colon = raw.find(" :")
        if colon < 0:
            colon = raw.find("\t:")
        if colon > 0 and stripped[0] not in "|+/":
            key = raw[:colon].strip()
            value = raw[colon + 2 :].strip()
            if key and len(key) <= 80:
                lk = key.lower()
                if lk in keys:
                    close()
                if not items:
                    start = n
                items.append((key, value))
                keys.add(lk)
                continue
        if stripped[0] in "|+":
            continue
        close()
        low = stripped.lower()
        if any(h in low for h in _CMD_HINTS) and not any(h in low for h in _MESSAGE_HINTS[:3]):
            command = stripped.lstrip("$#> ").strip()
        elif any(h in low for h in _MESSAGE_HINTS) and len(messages) < 100:
            messages.append(stripped[:300])
    close()
    if not blocks:
        probs.add("no 'Key : Value' lines found")
    return NpuSmiKv(blocks=tuple(blocks), messages=tuple(messages), problems=probs.result())


# --------------------------------------------------------------------------- npu-smi info -m


@dataclass(frozen=True)
class MappingRow:
    """One row of `npu-smi info -m`."""

    npu_id: int
    chip_id: int | None
    chip_name: str
    chip_logic_id: int | None = None
    chip_phy_id: int | None = None
    slot_id: int | None = None
    line: int = 0

    def to_dict(self) -> dict[str, Any]:
        """JSON-serialisable form."""
        return {k: getattr(self, k) for k in self.__dataclass_fields__}


@dataclass(frozen=True)
class NpuMapping:
    """The `npu-smi info -m` table."""

    rows: tuple[MappingRow, ...] = ()
    columns: tuple[str, ...] = ()
    problems: tuple[str, ...] = ()

    @property
    def npus(self) -> tuple[int, ...]:
        """Distinct NPU ids in order (an id of -1 means an unavailable NPU)."""
        return tuple(dict.fromkeys(r.npu_id for r in self.rows))

    @property
    def chip_names(self) -> tuple[str, ...]:
        """Distinct chip names in order."""
        return tuple(dict.fromkeys(r.chip_name for r in self.rows))

    def to_dict(self) -> dict[str, Any]:
        """JSON-serialisable form."""
        return {
            "columns": list(self.columns),
            "rows": [r.to_dict() for r in self.rows],
            "problems": list(self.problems),
        }


_MAP_FIELDS = {
    "npu id": "npu_id",
    "chip id": "chip_id",
    "chip logic id": "chip_logic_id",
    "chip phy-id": "chip_phy_id",
    "chip phy id": "chip_phy_id",
    "slot id": "slot_id",
    "chip name": "chip_name",
}


def _split_columns(line: str) -> list[str]:
    """Split a header on runs of 2+ blanks (tabs count as blanks)."""
    out: list[str] = []
    cur: list[str] = []
    blanks = 0
    for ch in line.expandtabs(4).strip():
        if ch == " ":
            blanks += 1
            continue
        if blanks >= 2 and cur:
            out.append("".join(cur))
            cur = []
        elif blanks == 1 and cur:
            cur.append(" ")
        blanks = 0
        cur.append(ch)
    if cur:
        out.append("".join(cur))
    return out


def parse_mapping(text: str) -> NpuMapping:
    """Parse `npu-smi info -m` (NPU ID / Chip ID / Chip Logic ID or Phy-ID / Chip Name)."""
    probs = _Problems()
    cols: list[str] = []
    header: list[str] = []
    rows: list[MappingRow] = []
    for n, raw in enumerate(_lines(text), 1):
        s = raw.strip()
        if not s:
            continue
        low = s.lower()
        if "npu id" in low and "chip name" in low:
            cols = [_MAP_FIELDS.get(c.lower(), c.lower()) for c in _split_columns(s)]
            header = cols
            continue
        if not cols:
            continue
        words = s.split()
        if cols[0] == "npu_id" and _to_int(words[0]) is None:
            cols = []  # the table ended
            continue
        try:
            k = cols.index("chip_name")
        except ValueError:
            k = len(cols) - 1
        after = len(cols) - 1 - k
        if len(words) < len(cols) - 1:
            probs.add(f"line {n}: expected {len(cols)} columns, got {s!r}")
            continue
        before_vals = words[:k]
        after_vals = words[len(words) - after :] if after else []
        name = " ".join(words[k : len(words) - after])
        vals: dict[str, Any] = {"chip_name": name}
        bad = False
        for c, v in zip(cols[:k] + cols[k + 1 :], before_vals + after_vals):
            iv = _to_int(v)
            if iv is None and v not in _NA:
                bad = True
            vals[c] = iv
        if bad or vals.get("npu_id") is None:
            probs.add(f"line {n}: unreadable mapping row {s!r}")
            continue
        rows.append(
            MappingRow(
                npu_id=vals["npu_id"],
                chip_id=vals.get("chip_id"),
                chip_name=name,
                chip_logic_id=vals.get("chip_logic_id"),
                chip_phy_id=vals.get("chip_phy_id"),
                slot_id=vals.get("slot_id"),
                line=n,
            )
        )
    if not rows:
        probs.add("no npu-smi info -m table found")
    return NpuMapping(rows=tuple(rows), columns=tuple(header), problems=probs.result())


# --------------------------------------------------------------------------- topology

KNOWN_LINK_TYPES = frozenset({"X", "HCCS", "PIX", "PXB", "PHB", "SYS", "NA", "SIO", "UB"})


@dataclass(frozen=True)
class TopoLink:
    """The link type between two NPUs."""

    a: int
    b: int
    kind: str

    def to_dict(self) -> dict[str, Any]:
        """JSON-serialisable form."""
        return {"a": self.a, "b": self.b, "kind": self.kind}


@dataclass(frozen=True)
class NpuTopo:
    """The `npu-smi info -t topo` matrix, CPU affinity and legend."""

    npus: tuple[int, ...] = ()
    links: tuple[TopoLink, ...] = ()
    affinity: tuple[tuple[int, tuple[tuple[int, int], ...]], ...] = ()
    legend: tuple[tuple[str, str], ...] = ()
    problems: tuple[str, ...] = ()

    def link(self, a: int, b: int) -> str | None:
        """The link type from NPU a to NPU b (`X` for a == b when listed)."""
        for lk in self.links:
            if lk.a == a and lk.b == b:
                return lk.kind
        return None

    def affinity_of(self, npu: int) -> tuple[tuple[int, int], ...]:
        """CPU ranges (inclusive) with affinity to one NPU; () when unknown."""
        for k, ranges in self.affinity:
            if k == npu:
                return ranges
        return ()

    def cpus_of(self, npu: int, limit: int = 65536) -> frozenset[int]:
        """The CPU numbers with affinity to one NPU (capped at LIMIT)."""
        out: set[int] = set()
        for lo, hi in self.affinity_of(npu):
            out.update(range(lo, min(hi, lo + limit) + 1))
            if len(out) >= limit:
                break
        return frozenset(out)

    @property
    def link_types(self) -> frozenset[str]:
        """Every link type between distinct NPUs."""
        return frozenset(lk.kind for lk in self.links if lk.a != lk.b)

    def peers(self, npu: int, kind: str) -> tuple[int, ...]:
        """NPUs that NPU reaches over KIND."""
        return tuple(lk.b for lk in self.links if lk.a == npu and lk.kind == kind and lk.b != npu)

    def is_full_mesh(self, kind: str) -> bool:
        """True when every pair of distinct NPUs is linked by KIND."""
        pairs = [lk for lk in self.links if lk.a != lk.b]
        n = len(self.npus)
        return n > 1 and len(pairs) == n * (n - 1) and all(lk.kind == kind for lk in pairs)

    def to_dict(self) -> dict[str, Any]:
        """JSON-serialisable form."""
        return {
            "npus": list(self.npus),
            "links": [lk.to_dict() for lk in self.links if lk.a != lk.b],
            "affinity": {str(k): [list(r) for r in v] for k, v in self.affinity},
            "legend": dict(self.legend),
            "problems": list(self.problems),
        }


def parse_affinity(value: str) -> tuple[tuple[int, int], ...] | None:
    """Parse `0-23,48-71` (or `5`) into inclusive ranges; None when unreadable."""
    v = value.strip()
    if not v:
        return None
    out: list[tuple[int, int]] = []
    for part in v.split(","):
        m = _RANGE_RE.match(part.strip())
        if not m:
            return None
        lo = int(m.group(1))
        hi = int(m.group(2)) if m.group(2) is not None else lo
        if hi < lo:
            return None
        out.append((lo, hi))
    return tuple(out)


def parse_topo(text: str) -> NpuTopo:
    """Parse the `npu-smi info -t topo` matrix with its CPU Affinity column and legend."""
    probs = _Problems()
    cols: list[int] = []
    has_affinity = False
    row_ids: list[int] = []
    links: dict[tuple[int, int], str] = {}
    affinity: list[tuple[int, tuple[tuple[int, int], ...]]] = []
    legend: list[tuple[str, str]] = []
    in_legend = False
    for n, raw in enumerate(_lines(text), 1):
        s = raw.strip()
        if not s:
            continue
        words = s.split()
        if s.lower().startswith("legend"):
            in_legend = True
            continue
        if in_legend and "=" in s:
            code, _, desc = s.partition("=")
            if code.strip():
                legend.append((code.strip(), desc.strip()))
            continue
        if _NPU_LABEL_RE.match(words[0]) and all(
            _NPU_LABEL_RE.match(w) for w in words[1:] if w.lower() not in ("cpu", "affinity")
        ):
            if cols:
                probs.add(f"line {n}: a second topology header; only the first matrix is read")
                break
            cols = [int(w[3:]) for w in words if _NPU_LABEL_RE.match(w)]
            has_affinity = "affinity" in s.lower()
            continue
        m = _NPU_LABEL_RE.match(words[0])
        if not m or not cols:
            continue
        npu = int(m.group(1))
        cells = words[1:]
        if len(cells) < len(cols):
            probs.add(f"line {n}: expected {len(cols)} link cells for NPU{npu}, got {len(cells)}")
        row_ids.append(npu)
        for col, kind in zip(cols, cells):
            links[(npu, col)] = kind
        if has_affinity:
            if len(cells) > len(cols):
                rest = "".join(cells[len(cols) :])
                ranges = parse_affinity(rest)
                if ranges is None:
                    if rest not in _NA:
                        probs.add(f"line {n}: unreadable CPU affinity {rest!r}")
                    ranges = ()
                affinity.append((npu, ranges))
            else:
                probs.add(f"line {n}: no CPU affinity for NPU{npu}")
    if not cols:
        probs.add("no topology header (NPU0 NPU1 ... CPU Affinity) found")
    seen_rows = set(row_ids)
    missing = [c for c in cols if c not in seen_rows]
    if missing:
        probs.add(f"no matrix row for NPU {', '.join(map(str, missing[:20]))}")
    known = KNOWN_LINK_TYPES | {c for c, _ in legend}
    unknown = sorted({k for k in links.values() if k not in known})
    for k in unknown[:20]:
        probs.add(f"unknown link type {k!r}")
    for (a, b), kind in links.items():
        if a == b and kind != "X":
            probs.add(f"NPU{a} to itself is {kind!r}, expected 'X'")
        back = links.get((b, a))
        if a < b and back is not None and back != kind:
            probs.add(f"asymmetric link NPU{a}-NPU{b}: {kind!r} vs {back!r}")
    order = list(dict.fromkeys([*cols, *row_ids]))
    return NpuTopo(
        npus=tuple(order),
        links=tuple(TopoLink(a, b, k) for (a, b), k in links.items()),
        affinity=tuple(affinity),
        legend=tuple(legend),
        problems=probs.result(),
    )
