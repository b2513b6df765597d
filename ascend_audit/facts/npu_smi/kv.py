"""`npu-smi info -t board|common|health|…`: key/value blocks."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ascend_audit.facts.common import Problems as _Problems
from ascend_audit.facts.npu_smi._text import _NA, _lines, _to_int, normalize_bus_id


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
