"""`npu-smi info`: the device table (22.0 to 26.0, A3, Ascend 950) and its process table."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ascend_audit.facts.common import Problems as _Problems
from ascend_audit.facts.npu_smi._text import (
    _HEADER_RE,
    _IDLE_RE,
    _NA,
    _lines,
    _to_float,
    _to_int,
    normalize_bus_id,
)


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
    top_m = _read_metrics(cell(tcells, lay.top_cell), lay.top_keys, tline, probs)
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

    temp = num(top_m, "temp", _to_float, tline)
    aicore = num(bot, "aicore", _to_float, bline)
    hp = pair(top_m, "hugepages", tline)
    mem = pair(bot, "memory", bline)
    hbm = pair(bot, "hbm", bline)
    return NpuChip(
        npu_id=npu_id,
        chip_id=chip_id if chip_id is not None else 0,
        name=name,
        health=health,
        phy_id=second if lay.second_id == "phy_id" else None,
        logic_id=second if lay.second_id == "logic_id" else None,
        power_w=num(top_m, "power", _to_float, tline),
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
