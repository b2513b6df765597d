"""Facts from logs: operators that torch_npu sent to the host CPU, AI CPU warnings and
dtype casts the device forced, found anywhere in a line, streamed in bounded memory."""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any

from ascend_audit.safe_io import open_regular

__all__ = [
    "FallbackHit",
    "FallbackScanner",
    "FallbackSummary",
    "read_text_lines",
    "scan_fallback_lines",
]

MAX_LINE = 65_536
MAX_OPERATORS = 1000  # distinct (kind, operator) keys kept; more are folded into "<other>"
MAX_EVIDENCE = 5  # line numbers and excerpts kept per operator
MAX_DISTINCT = 10_000  # distinct message texts remembered per operator for de-duplication
EXCERPT = 240

# torch_npu's CPU fallback (npu_cpu_fallback); matching only the start survives wrapped lines.
_CPU_FALLBACK_RE = re.compile(
    r"The operator '([^']{1,200})' is not currently supported on the NPU\b"
)
# Other wordings of a CPU fallback, e.g. "... fallback to CPU", "falling back to cpu".
_GENERIC_CPU_RE = re.compile(
    r"\bfall(?:s|ing)?[ _-]?back\b[^.\n]{0,40}?\b(?:to|on)\s+(?:the\s+)?CPU\b", re.I
)
# "Device do not support double dtype now, dtype cast repalce with float." (typo is torch_npu's).
_DTYPE_CAST_RE = re.compile(
    r"Device do(?:es)? not support (\w+) dtype now,? dtype cast re(?:pal|pla)ce with (\w+)", re.I
)
_AI_CPU_RE = re.compile(r"\bAI[ _]?CPU\b", re.I)
# An AI CPU *fault* (an execution error report, or HCCL's "aicpu rank" context) is the error-code
# catalog's business, not a warning that an operator was placed on AI CPU.
_AI_CPU_FAULT_RE = re.compile(
    r"execution is abnormal|exception occurred during|aicpu exception|kernel execute failed"
    r"|execution timed? ?out|\baicpu rank\b",
    re.I,
)
_WARNING_MARK_RE = re.compile(
    r"\[W[\d ]|\bwarn(?:ing)?\b|\[WARNING\]|\bERROR\b|\bexception\b", re.I
)
_OP_IN_TEXT_RE = re.compile(
    r"'((?:aten|torchvision|npu|c10d|_?\w+)::[\w.]+)'"
    r"|\b((?:aten|torchvision)::[\w.]+)"
    r"|\b[Oo]p(?:erator)?(?:[ _]?(?:[Tt]ype|[Nn]ame))?\s*[\[:=(]\s*\[?['\"]?([A-Za-z_][\w.:]*)"
    r"|\b[Oo]p(?:erator)?\s+([A-Z]\w*)",
)


@dataclass(frozen=True)
class FallbackHit:
    """One operator seen falling back (or being forced off the fast path)."""

    kind: str  # cpu_fallback | ai_cpu | dtype_cast
    operator: str
    lines: int  # log lines that carried it
    distinct: int  # distinct message texts (repeated identical lines count once)
    first_lines: tuple[int, ...]  # line numbers of the first occurrences
    excerpts: tuple[str, ...]  # the message of the first occurrences, trimmed

    def to_dict(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "operator": self.operator,
            "lines": self.lines,
            "distinct": self.distinct,
            "first_lines": list(self.first_lines),
            "excerpts": list(self.excerpts),
        }


@dataclass(frozen=True)
class FallbackSummary:
    """Every fallback found in a log, per operator."""

    source: str
    lines_scanned: int = 0
    hits: tuple[FallbackHit, ...] = ()
    truncated_lines: int = 0
    problems: tuple[str, ...] = ()

    @property
    def cpu_fallback_ops(self) -> tuple[str, ...]:
        return tuple(h.operator for h in self.hits if h.kind == "cpu_fallback")

    def by_kind(self, kind: str) -> tuple[FallbackHit, ...]:
        return tuple(h for h in self.hits if h.kind == kind)

    @property
    def total_lines(self) -> int:
        """Log lines that carried any fallback message."""
        return sum(h.lines for h in self.hits)

    def to_dict(self) -> dict[str, Any]:
        return {
            "source": self.source,
            "lines_scanned": self.lines_scanned,
            "truncated_lines": self.truncated_lines,
            "total_lines": self.total_lines,
            "hits": [h.to_dict() for h in self.hits],
            "problems": list(self.problems),
        }


class _Slot:
    __slots__ = ("distinct", "excerpts", "first_lines", "lines", "texts")

    def __init__(self) -> None:
        self.lines = 0
        self.texts: set[int] = set()
        self.distinct = 0
        self.first_lines: list[int] = []
        self.excerpts: list[str] = []


_PREFIX_RE = re.compile(r"(?:\[rank\d+\]:)?\[W(?:\d{3,4}\s[\d:.]+)?\s\S{1,80}:\d+\]")


def _message(line: str, start: int) -> str:
    """The warning text from its own prefix on, without progress bars or ANSI noise."""
    base = max(0, start - 160)
    head = line[base:start]
    prefixes = list(_PREFIX_RE.finditer(head))
    cut = prefixes[-1].start() if prefixes else head.rfind("Warning:")
    text = line[base + cut :] if cut >= 0 else line[start:]
    text = re.sub(r"\x1b\[[0-9;]*m", "", text).strip()
    return text[:EXCERPT]


def _dedup_key(message: str) -> int:
    # Timestamps and ranks vary between identical warnings; drop them before hashing.
    normal = re.sub(r"\[W\d{3,4} [\d:.]+ ", "[W ", message)
    normal = re.sub(r"\[rank\d+\]:|\(\w+ pid=\d+\)|\bpid[=:]\s*\d+", "", normal)
    return hash(normal.strip())


def _ops_in(text: str) -> str | None:
    m = _OP_IN_TEXT_RE.search(text)
    if not m:
        return None
    return next((g for g in m.groups() if g), None)


class FallbackScanner:
    """Incremental fallback finder: feed it lines (`line`), then take the `summary`."""

    def __init__(self, source: str = "<lines>", max_line: int = MAX_LINE) -> None:
        self.source = source
        self.max_line = max_line
        self.slots: dict[tuple[str, str], _Slot] = {}
        self.problems: list[str] = []
        self.scanned = 0
        self.truncated = 0
        self.folded = False

    def record(self, kind: str, op: str, lineno: int, message: str) -> None:
        key = (kind, op)
        slot = self.slots.get(key)
        if slot is None:
            if len(self.slots) >= MAX_OPERATORS:
                self.folded = True
                key = (kind, "<other>")
                slot = self.slots.setdefault(key, _Slot())
            else:
                slot = self.slots[key] = _Slot()
        slot.lines += 1
        h = _dedup_key(message)
        if h not in slot.texts:
            slot.distinct += 1
            if len(slot.texts) < MAX_DISTINCT:
                slot.texts.add(h)
            if len(slot.first_lines) < MAX_EVIDENCE:
                slot.first_lines.append(lineno)
                slot.excerpts.append(message)

    def line(self, lineno: int, line: str) -> None:
        """Look at one line (lines the caller skips count as scanned through `skipped`)."""
        self.scanned += 1
        if len(line) > self.max_line:
            self.truncated += 1
            line = line[: self.max_line]
        _scan_line(line, lineno, self.record)

    def skipped(self, n: int) -> None:
        """Lines a prefilter proved hold no fallback text."""
        self.scanned += n

    def summary(self) -> FallbackSummary:
        problems = list(self.problems)
        if self.truncated:
            problems.append(
                f"{self.truncated} line(s) longer than {self.max_line} characters were cut"
            )
        if self.folded:
            problems.append(f"more than {MAX_OPERATORS} distinct operators; the rest are <other>")
        hits = tuple(
            sorted(
                (
                    FallbackHit(
                        kind=k,
                        operator=op,
                        lines=sl.lines,
                        distinct=sl.distinct,
                        first_lines=tuple(sl.first_lines),
                        excerpts=tuple(sl.excerpts),
                    )
                    for (k, op), sl in self.slots.items()
                ),
                key=lambda h: (h.first_lines[0] if h.first_lines else 0, h.kind, h.operator),
            )
        )
        return FallbackSummary(self.source, self.scanned, hits, self.truncated, tuple(problems))


def scan_fallback_lines(
    lines: Iterable[str] | Iterable[tuple[int, str]],
    source: str = "<lines>",
    max_line: int = MAX_LINE,
) -> FallbackSummary:
    """Find CPU fallbacks, AI CPU warnings and forced dtype casts in log lines; never raises."""
    sc = FallbackScanner(source, max_line)
    try:
        for i, item in enumerate(lines, 1):
            if isinstance(item, tuple):
                lineno, line = item
            else:
                lineno, line = i, item
            if isinstance(line, bytes):
                line = line.decode("utf-8", errors="replace")
            elif not isinstance(line, str):
                continue
            sc.line(lineno, line)
    except Exception as exc:  # an unreadable stream ends the scan, not the audit
        sc.problems.append(f"{source}: reading stopped at line {sc.scanned + 1}: {exc}")
    return sc.summary()


def _scan_line(line: str, lineno: int, record: Any) -> None:
    # Cheap substring gates first: almost every log line matches none of them.
    low = None
    found_cpu = False
    if "not currently supported on the NPU" in line:
        for m in _CPU_FALLBACK_RE.finditer(line):
            record("cpu_fallback", m.group(1), lineno, _message(line, m.start()))
            found_cpu = True
    if "dtype cast" in line:
        for m in _DTYPE_CAST_RE.finditer(line):
            record(
                "dtype_cast",
                f"{m.group(1).lower()}->{m.group(2).lower()}",
                lineno,
                _message(line, m.start()),
            )
    if not found_cpu:
        low = line.lower()
        if "back" in low and "cpu" in low:
            generic = _GENERIC_CPU_RE.search(line)
            if generic and "MPS backend" not in line:
                op = _ops_in(line) or "<unnamed>"
                record("cpu_fallback", op, lineno, _message(line, 0))
                found_cpu = True
    if not found_cpu:
        low = low if low is not None else line.lower()
        device_trace = "[FUNC:" in line or "retCode" in line  # a runtime error block, not a warning
        if (
            ("aicpu" in low or "ai cpu" in low or "ai_cpu" in low)
            and not device_trace
            and _WARNING_MARK_RE.search(line)
            and _AI_CPU_RE.search(line)
            and not _AI_CPU_FAULT_RE.search(line)
        ):
            op = _ops_in(line) or "<unnamed>"
            record("ai_cpu", op, lineno, _message(line, 0))


def read_text_lines(
    path: str | os.PathLike[str], max_line: int = MAX_LINE
) -> Iterator[tuple[int, str]]:
    """Yield (line number, text) from a file, decoding with errors='replace', in bounded memory.

    Lines longer than max_line characters are cut; the rest of such a line is skipped without
    being held in memory. A missing or unreadable file yields nothing.
    """
    try:
        with open_regular(path) as fh:
            yield from _iter_lines(fh, max_line)
    except OSError:
        return


def _iter_lines(fh: Any, max_line: int) -> Iterator[tuple[int, str]]:
    chunk_bytes = max(1024, max_line * 4)  # utf-8: at most 4 bytes a character
    lineno = 0
    pending = b""
    skipping = False
    while True:
        data = fh.read(1 << 20)
        if not data:
            break
        pending += data
        start = 0
        while True:
            nl = pending.find(b"\n", start)
            if nl < 0:
                break
            raw = pending[start:nl]
            start = nl + 1
            if skipping:
                skipping = False
                continue
            lineno += 1
            yield lineno, _decode(raw, max_line)
        pending = pending[start:]
        if skipping:
            pending = b""
        elif len(pending) > chunk_bytes:
            # an overlong line: emit its head now and drop the rest as it streams in
            lineno += 1
            yield lineno, _decode(pending[:chunk_bytes], max_line)
            pending = b""
            skipping = True
    if pending and not skipping:
        lineno += 1
        yield lineno, _decode(pending, max_line)


def _decode(raw: bytes, max_line: int) -> str:
    text = raw.decode("utf-8", errors="replace")
    if text.endswith("\r"):
        text = text[:-1]
    return text[: max_line + 1] if len(text) > max_line else text
