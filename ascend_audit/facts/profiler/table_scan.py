"""The fast reader of kernel tables: only the columns the checks need, one compiled regex per
~1 MiB chunk of whole lines, and the aggregation in C-level builtins (Counter, zip, map).

It accepts a chunk only when it can prove that the csv module would split every line of it the
same way: each line has exactly the header's number of fields, every quoted field lies in the
part the regex walks (which validates it strictly), no NUL, no bare CR, no line over LINE_CAP
and no field over the csv module's field size limit. A chunk without any quote is read by a
simpler pattern (the key and duration fields as runs of non-commas); one with quotes by the
strict walk capturing two groups only (the span of the key fields, the duration), so that a
row makes two objects, not one per wanted column. Either way the AI CPU rows' inputs come from
the full pattern on their own lines. Anything else (embedded newlines, stray quotes, ragged
rows …) makes it decline, and the caller reads the whole file with the csv module instead. A
last line without its newline (a truncated file) goes through the csv module on its own,
exactly as the csv reader would see it.
"""

from __future__ import annotations

import csv
import re
import sys
from collections.abc import Callable
from pathlib import Path
from typing import NamedTuple

from ascend_audit.facts.profiler.accumulate import KernelAccumulator, absorb_keyed, absorb_rows
from ascend_audit.facts.profiler.columns import TableLayout
from ascend_audit.safe_io import LINE_CAP, LineTooLong, line_chunks, open_regular

BUFFER_BYTES = LINE_CAP + 1  # a chunk; a line that does not fit is one the csv reader caps
HEADER_CAP = 1 << 16  # read_header looks at this much
_KEEP = b',"\r\n'
_DELETE = bytes(b for b in range(256) if b not in _KEEP)  # translate() leaves a line's shape
# Atomic groups and possessive runs (Python 3.11+): no field can be re-split once read (no other
# split could match anyway), so the engine keeps no backtrack points (about 10% off the walk).
FIELD_ATOMIC = rb'(?>[^,"\r\n]*+(?!")|"[^"\r\n]*+(?:""[^"\r\n]*+)*+")', b"*+"
FIELD_PORTABLE = rb'(?:"[^"\r\n]*(?:""[^"\r\n]*)*"|[^,"\r\n]*)', b"*"
_FIELD, _RUN = FIELD_ATOMIC if sys.version_info >= (3, 11) else FIELD_PORTABLE
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
        self.keyed: re.Pattern[bytes] | None = None  # the strict walk capturing (span, dur)
        self.quick = _Quick(layout)
        self.extend(max(self.wanted) + 1)

    def extend(self, walk: int) -> None:
        if walk <= self.walk:
            return
        self.walk = walk
        end = rb",[^\n]" + _RUN + rb"\n" if walk < self.width else rb"\r?\n"
        fields = [b"(" + _FIELD + b")" if i in self.wanted else _FIELD for i in range(walk)]
        self.regex = re.compile(rb"(?m)^" + b",".join(fields) + end)
        if self.quick.regex is not None:  # two groups, as the quick pattern, not one per column
            keyed = self.quick.group_fields([_FIELD] * walk)
            self.keyed = re.compile(rb"(?m)^" + b",".join(keyed) + end)


class _Quick:
    """The regex for chunks without a quote: from each newline, the fields up to the key and
    duration columns as runs of non-commas, capturing the span of the key columns (core,
    type, name) and the duration; `regex` is None when the duration lies inside that span."""

    def __init__(self, layout: TableLayout) -> None:
        idx = layout.indices
        width = len(layout.header)
        keys = [(k, idx[k]) for k in ("core", "type", "name") if k in idx]
        lo, hi = min(i for _k, i in keys), max(i for _k, i in keys)
        dur = idx["dur"]
        self.named = [(k, i - lo) for k, i in keys]  # position among the span's fields
        self.upto = max(hi, dur)
        self.key_first = lo < dur
        self.lo, self.hi, self.dur = lo, hi, dur
        self.regex: re.Pattern[bytes] | None = None
        self.span = re.compile(b",".join([b"(" + _FIELD + b")"] * (hi - lo + 1)))
        if lo <= dur <= hi:
            return
        plain = [
            rb"[^,]" + _RUN if i < width - 1 else rb"[^,\r\n]" + _RUN for i in range(self.upto + 1)
        ]
        self.regex = re.compile(b"\n" + b",".join(self.group_fields(plain)))

    def group_fields(self, fields: list[bytes]) -> list[bytes]:
        """The field patterns with two groups: the span of the key fields, the duration."""
        parts = []
        for i, f in enumerate(fields):
            if i == self.dur:
                f = b"(" + f + b")"
            if i == self.lo:
                f = b"(" + f
            if i == self.hi:
                f += b")"
            parts.append(f)
        return parts

    def fields_of(self, span: bytes) -> dict[str, bytes]:
        """The raw key fields of one captured span (quoted ones as written)."""
        m = self.span.fullmatch(span)
        if m is None:  # the strict walk validated every field of the span
            raise Declined("a key span the field pattern refuses")
        cut = m.groups()
        return {k: cut[i] for k, i in self.named}


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
    with open_regular(path) as fh:
        head = fh.readline(HEADER_CAP)
        _check_header(head)
        not_utf8 = not _is_utf8(head)
        lines = 1
        try:
            for piece in line_chunks(fh, BUFFER_BYTES, progress=progress):
                chunk = bytes(piece)
                if not chunk.endswith(b"\n"):
                    if len(chunk) > LINE_CAP:  # bounded_lines would cut it out
                        raise Declined("a last line longer than the line cap")
                    return ScanResult(acc, not_utf8, chunk, lines)
                odd, count = _absorb_chunk(acc, chunk, pattern, shapes)
                not_utf8 = not_utf8 or odd
                lines += count
        except LineTooLong:
            raise Declined("a line longer than the line cap") from None
    return ScanResult(acc, not_utf8, b"", lines)


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
) -> tuple[bool, int]:
    """Add one chunk of whole lines; (whether it held bytes that are not UTF-8, its lines)."""
    if b"\x00" in chunk:
        raise Declined("NUL")
    not_utf8 = not _is_utf8(chunk)
    if _may_hold_a_long_field(chunk):
        raise Declined("a field the csv module finds over its field size limit")
    line_shapes = chunk.translate(None, _DELETE)[:-1].split(b"\n")
    lines = len(line_shapes)
    distinct = set(line_shapes)
    if b"" in distinct or b"\r" in distinct:  # blank lines, perhaps: the csv module skips them
        chunk = _BLANK_LINES.sub(b"", chunk)
        if not chunk:
            return not_utf8, lines
        line_shapes = chunk.translate(None, _DELETE)[:-1].split(b"\n")
        distinct = set(line_shapes)
    walk = pattern.walk
    for shape in distinct:
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
    # Without any quote the commas alone are the fields, as the shapes counted them. (With
    # quotes, a stray one beside a plain byte, which the shapes cannot see, could make the csv
    # module count fields otherwise: only the strict pattern, walking each quoted field, knows.)
    if pattern.quick.regex is not None and b'"' not in chunk:
        _absorb_quick(acc, chunk, len(line_shapes), pattern)
        return not_utf8, lines
    if pattern.keyed is not None:
        found = pattern.keyed.findall(chunk)
        if len(found) != len(line_shapes):
            raise Declined("a line the strict pattern refuses")
        _absorb_found(acc, chunk, found, pattern)
        return not_utf8, lines
    assert pattern.regex is not None
    rows = pattern.regex.findall(chunk)
    if len(rows) != len(line_shapes):
        raise Declined("a line the strict pattern refuses")
    absorb_rows(acc, rows, pattern.at, line_cell)
    return not_utf8, lines


def _may_hold_a_long_field(chunk: bytes) -> bool:
    """True when a line may be longer than the csv module's field size limit: unless every
    aligned window of half the limit holds a newline (then no line reaches the limit), the
    lines are measured."""
    limit = csv.field_size_limit()
    if len(chunk) <= limit:
        return False
    half = max(limit // 2, 1)
    if all(chunk.find(b"\n", at, at + half) >= 0 for at in range(0, len(chunk), half)):
        return False
    return max(map(len, chunk.split(b"\n"))) > limit


def _absorb_quick(acc: KernelAccumulator, chunk: bytes, lines: int, pattern: _Pattern) -> None:
    """Add a chunk without a quote: one plain regex pass for the key and duration fields."""
    assert pattern.quick.regex is not None
    found = pattern.quick.regex.findall(b"\n" + chunk)
    if len(found) != lines:
        raise Declined("a line the plain pattern refuses")
    _absorb_found(acc, chunk, found, pattern)


def _absorb_found(
    acc: KernelAccumulator, chunk: bytes, found: list[tuple[bytes, bytes]], pattern: _Pattern
) -> None:
    """Add the (key span, duration) pairs found one per line of chunk, in line order; the AI
    CPU rows' inputs come from the strict pattern on their own lines."""
    quick = pattern.quick
    first, second = zip(*found)
    spans, durs = (first, second) if quick.key_first else (second, first)
    strict = pattern.regex
    assert strict is not None
    dt, sh = pattern.at.get("dtypes"), pattern.at.get("shapes")

    def inputs(rows: list[int]) -> list[tuple[bytes | None, bytes | None]]:
        lines = chunk.split(b"\n")  # found[i] is line i: each match lies within its line
        out: list[tuple[bytes | None, bytes | None]] = []
        for i in rows:
            m = strict.match(lines[i] + b"\n")
            if m is None:
                raise Declined("an AI CPU row the strict pattern refuses")
            r = m.groups()
            out.append((None if dt is None else r[dt], None if sh is None else r[sh]))
        return out

    absorb_keyed(acc, spans, durs, quick.fields_of, line_cell, inputs)
