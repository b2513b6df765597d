"""The fast reader of kernel tables: only the columns the checks need, one compiled regex per
~1 MiB chunk of whole lines, and the aggregation in C-level builtins (Counter, zip, map).

It accepts a chunk only when it can prove that the csv module would split every line of it the
same way: each line has exactly the header's number of fields, every quoted field lies in the
part the regex walks (which validates it strictly), no NUL, no bare CR, no line over LINE_CAP.
Anything else (embedded newlines, stray quotes, ragged rows …) makes it decline, and the caller
reads the whole file with the csv module instead. A last line without its newline (a truncated
file) goes through the csv module on its own, exactly as the csv reader would see it.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import NamedTuple

from ascend_audit.facts.profiler.accumulate import KernelAccumulator, absorb_rows
from ascend_audit.facts.profiler.columns import TableLayout
from ascend_audit.safe_io import LINE_CAP, open_regular

BUFFER_BYTES = LINE_CAP + 1  # a chunk; a line that does not fit is one the csv reader caps
HEADER_CAP = 1 << 16  # read_header looks at this much
_KEEP = b',"\r\n'
_DELETE = bytes(b for b in range(256) if b not in _KEEP)  # translate() leaves a line's shape
_QUOTED = rb'"[^"\r\n]*(?:""[^"\r\n]*)*"'
_PLAIN = rb'[^,"\r\n]*'
_FIELD = rb"(?:" + _QUOTED + rb"|" + _PLAIN + rb")"
_BLANK_LINES = re.compile(rb"(?m)^\r?\n")


class ScanResult(NamedTuple):
    """What the fast path read: the rows' aggregate, whether any byte was not UTF-8, the last
    line when it has no newline (for the csv module), and the physical lines before it."""

    acc: KernelAccumulator
    not_utf8: bool
    last_line: bytes
    lines_before: int


def _is_utf8(data: bytes) -> bool:
    if data.isascii():
        return True
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


class Declined(Exception):
    """The fast path cannot prove this file reads as the csv module reads it."""


def line_cell(raw: bytes | None) -> str | None:
    """A raw field (as the regex captured it) as the csv module would give it; None if missing."""
    if raw is None:
        return None
    if raw[:1] == b'"':
        raw = raw[1:-1].replace(b'""', b'"')
    text = raw.decode("utf-8", "replace")
    return None if text in ("", "N/A") else text


def shape_of(shape: bytes) -> tuple[int, int] | None:
    """(fields, index of the last quoted field or -1) of one line reduced to its commas, quotes
    and CRs; None when quoting is not plain field-enclosing or a CR is not the line's end."""
    fields = 0
    last_quoted = -1
    i = 0
    n = len(shape)
    while True:
        if i < n and shape[i] == 0x22:  # a quoted field: to the quote not followed by another
            i += 1
            while True:
                j = shape.find(b'"', i)
                if j < 0:
                    return None
                if j + 1 < n and shape[j + 1] == 0x22:
                    i = j + 2
                    continue
                i = j + 1
                break
            last_quoted = fields
        elif i < n and shape[i] != 0x2C and shape[i] != 0x0D:
            return None  # a quote inside an unquoted field
        fields += 1
        if i == n or shape[i:] == b"\r":
            return fields, last_quoted
        if shape[i] != 0x2C:
            return None
        i += 1


class _Pattern:
    """The regex for one table: the first `walk` fields strictly, the wanted ones captured."""

    def __init__(self, layout: TableLayout) -> None:
        self.width = len(layout.header)
        by_index = sorted((i, k) for k, i in layout.indices.items())
        self.at = {k: pos for pos, (_i, k) in enumerate(by_index)}  # in a findall tuple
        self.wanted = {i for i, _ in by_index}
        self.walk = 0
        self.regex: re.Pattern[bytes] | None = None
        self.extend(max(self.wanted) + 1)

    def extend(self, walk: int) -> None:
        if walk <= self.walk:
            return
        self.walk = walk
        fields = [b"(" + _FIELD + b")" if i in self.wanted else _FIELD for i in range(walk)]
        end = rb",[^\n]*\n" if walk < self.width else rb"\r?\n"
        self.regex = re.compile(rb"(?m)^" + b",".join(fields) + end)


def scan_table(
    path: Path, layout: TableLayout, progress: Callable[[int], None] | None = None
) -> ScanResult | None:
    """Aggregate the data rows of a kernel table; None when it declines."""
    try:
        return _scan(path, layout, progress)
    except Declined:
        return None


def _scan(path: Path, layout: TableLayout, progress: Callable[[int], None] | None) -> ScanResult:
    pattern = _Pattern(layout)
    shapes: dict[bytes, tuple[int, int] | None] = {}
    acc = KernelAccumulator()
    not_utf8 = False
    buf = bytearray(BUFFER_BYTES)
    view = memoryview(buf)
    with open_regular(path) as fh:
        head = fh.readline(HEADER_CAP)
        _check_header(head)
        not_utf8 = not _is_utf8(head)
        lines = 1
        filled = 0
        while True:
            got = fh.readinto(view[filled:])
            if progress and got:
                progress(got)
            if not got:
                return ScanResult(acc, not_utf8, bytes(buf[:filled]), lines)
            filled += got
            cut = buf.rfind(b"\n", 0, filled) + 1
            if cut == 0:
                if filled == len(buf):
                    raise Declined("a line longer than the line cap")
                continue
            chunk = bytes(view[:cut])
            buf[: filled - cut] = buf[cut:filled]
            filled -= cut
            lines += chunk.count(b"\n")
            not_utf8 = _absorb_chunk(acc, chunk, pattern, shapes) or not_utf8


def _check_header(head: bytes) -> None:
    """The header must be one plain line, read the same by read_header and the csv module."""
    if not head.endswith(b"\n") or b'"' in head or b"\x00" in head:
        raise Declined("header")
    text = head.decode("utf-8", "replace").lstrip("\ufeff").rstrip("\r\n")
    if len(text.splitlines()) > 1:
        raise Declined("header")


def _absorb_chunk(
    acc: KernelAccumulator,
    chunk: bytes,
    pattern: _Pattern,
    shapes: dict[bytes, tuple[int, int] | None],
) -> bool:
    """Add one chunk of whole lines; True when it held bytes that are not UTF-8."""
    if b"\x00" in chunk:
        raise Declined("NUL")
    not_utf8 = not _is_utf8(chunk)
    if chunk.startswith((b"\n", b"\r\n")) or b"\n\n" in chunk or b"\n\r\n" in chunk:
        chunk = _BLANK_LINES.sub(b"", chunk)  # the csv module skips blank lines
        if not chunk:
            return not_utf8
    lines = chunk.count(b"\n")
    walk = pattern.walk
    for shape in Counter(chunk.translate(None, _DELETE)[:-1].split(b"\n")):
        if shape in shapes:
            known = shapes[shape]
        else:
            if len(shapes) >= 4096:
                shapes.clear()
            known = shapes[shape] = shape_of(shape)
        if known is None or known[0] != pattern.width:
            raise Declined("a line the csv module reads differently, or ragged")
        walk = max(walk, known[1] + 1)
    pattern.extend(walk)  # every quoted field inside the strictly checked part
    assert pattern.regex is not None
    rows = pattern.regex.findall(chunk)
    if len(rows) != lines:
        raise Declined("a line the strict pattern refuses")
    absorb_rows(acc, rows, pattern.at, line_cell)
    return not_utf8
