"""The stdlib fast path for kernel tables (facts/profiler/table_scan.py) gives exactly what the
csv-module reader gives, and what the pyarrow reader it replaced gave, on every real and
project-written table, on generated tables of both torch_npu layouts, and on hostile rows."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from shared_fixtures import DATA, FIXTURES, REPO

import ascend_audit.facts.profiler.kernels as kernels
import ascend_audit.facts.profiler.table_scan as table_scan
from ascend_audit.facts.profiler import KernelSummary, summarize_kernels
from ascend_audit.facts.profiler.columns import detect_layout, read_header
from ascend_audit.facts.profiler.kernels_arrow import _FallBack, summarize_kernels_arrow

sys.path.insert(0, str(REPO / "benchmarks"))
from gen_kernel_details import generate


def _kernel_tables() -> list[Path]:
    found = sorted((FIXTURES / "msprof").glob("kernel_details*.csv"))
    found += sorted((DATA / "traces").rglob("*.csv"))
    found += sorted((REPO / "examples").rglob("kernel_details.csv"))
    out = []
    for p in found:
        header, _ = read_header(p)
        if header is not None and not detect_layout(header, p.name).problem:
            out.append(p)
    return out


@pytest.fixture(params=["atomic", "portable"])
def field_patterns(request, monkeypatch):
    """Both field-pattern sets: atomic/possessive (3.11+) and the portable one (3.9, 3.10)."""
    if request.param == "atomic" and sys.version_info < (3, 11):
        pytest.skip("atomic groups and possessive quantifiers need Python 3.11")
    chosen = table_scan.FIELD_ATOMIC if request.param == "atomic" else table_scan.FIELD_PORTABLE
    monkeypatch.setattr(table_scan, "_FIELD", chosen[0])
    monkeypatch.setattr(table_scan, "_RUN", chosen[1])
    return request.param


def _both(path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[KernelSummary, KernelSummary, bool]:
    """(summary as the product reads it, summary by the csv module alone, fast path taken)."""
    taken: list[bool] = []
    real = table_scan.scan_table

    def spy(*a, **k):
        r = real(*a, **k)
        taken.append(r is not None)
        return r

    with monkeypatch.context() as m:
        m.setattr(kernels, "scan_table", spy)
        fast = summarize_kernels(path)
        m.setattr(kernels, "scan_table", lambda *_a, **_k: None)
        slow = summarize_kernels(path)
    return fast, slow, bool(taken and taken[0])


def _same_as_arrow(new: KernelSummary, path: Path) -> None:
    try:
        old = summarize_kernels_arrow(path)
    except _FallBack:
        return  # the pyarrow reader gave up on this file (non-UTF-8): nothing to compare
    a, b = new.to_dict(), old.to_dict()
    # The malformed-row message now names the line; everything else is as it was.
    a.pop("problems"), b.pop("problems")
    assert a == b
    assert len(new.problems) == len(old.problems)


@pytest.mark.parametrize("path", _kernel_tables(), ids=lambda p: p.name)
def test_every_kernel_table_reads_the_same_three_ways(path, monkeypatch):
    fast, slow, taken = _both(path, monkeypatch)
    assert fast == slow
    _same_as_arrow(fast, path)
    if "hostile" not in path.parts:
        assert taken, f"the fast path declined a well-formed table: {path}"


def test_real_fixtures_are_present_or_the_reason_is_stated():
    if not (FIXTURES / "msprof").is_dir():
        pytest.skip("real fixtures ../shared/fixtures/msprof are not beside this checkout")
    assert len(list((FIXTURES / "msprof").glob("kernel_details*.csv"))) >= 3


@pytest.mark.parametrize("layout", ["2023", "2025"])
def test_generated_tables_of_both_layouts(layout, tmp_path, monkeypatch, field_patterns):
    path = generate(5000, layout, tmp_path)
    fast, slow, taken = _both(path, monkeypatch)
    assert taken and fast == slow and fast.rows == 5000
    _same_as_arrow(fast, path)
    monkeypatch.setattr(table_scan, "BUFFER_BYTES", 3000)
    assert summarize_kernels(path) == fast  # chunk seams do not move a digit
    monkeypatch.setattr(kernels, "ARROW_ABOVE_BYTES", 0)  # as a large file is read
    big = summarize_kernels(path)
    assert big.to_dict() == fast.to_dict()


def test_without_pyarrow_a_large_table_takes_the_stdlib_fast_path(tmp_path, monkeypatch):
    """pyarrow is the optional [arrow] extra: a node without it reads a large kernel table with
    the stdlib fast path (table_scan), not the slower csv-module reference reader, and gets
    the same summary."""
    path = generate(5000, "2023", tmp_path)
    reference = summarize_kernels(path)
    monkeypatch.setattr(kernels, "ARROW_ABOVE_BYTES", 0)  # as a large file is read
    monkeypatch.setattr(kernels, "arrow_installed", lambda: False)
    taken: list[bool] = []
    real = kernels.scan_table

    def spy(*a, **k):
        r = real(*a, **k)
        taken.append(r is not None)
        return r

    monkeypatch.setattr(kernels, "scan_table", spy)
    assert summarize_kernels(path).to_dict() == reference.to_dict()
    assert taken == [True]


def test_arrow_installed_looks_without_importing(monkeypatch):
    import sys

    monkeypatch.delitem(sys.modules, "pyarrow", raising=False)
    found = kernels.arrow_installed()
    assert isinstance(found, bool) and "pyarrow" not in sys.modules


def test_a_truncated_last_line_is_read_by_the_csv_module_alone(tmp_path, monkeypatch):
    whole = generate(300, "2023", tmp_path).read_bytes()
    path = tmp_path / "cut.csv"
    path.write_bytes(whole[: whole.rindex(b"\n", 0, len(whole) - 1) + 60])
    fast, slow, taken = _both(path, monkeypatch)
    assert taken and fast == slow and fast.rows == 299
    assert any("1 malformed row(s)" in p and "line 301" in p for p in fast.problems)


# --------------------------------------------------------------------------- hostile rows

COLUMNS = ["Name", "Type", "Accelerator Core", "Duration(us)", "Input Shapes", "Input Data Types"]
EXTRA = ["Step Id", "Start Time(us)", "Block Dim", "Output Shapes", "aiv_time(us)"]

plain = st.sampled_from(
    [
        "MatMul",
        "Cast",
        "trans_Cast_3",
        "trans_TransData_1",
        "AI_CPU",
        "AI_CORE",
        "aicpu",
        " AI_CPU\t",
        "N/A",
        "NA",
        "",
        " ",
        "12.5",
        "7",
        "nan",
        "inf",
        "1e3",
        "x1",
        "BatchMatMul",
        "SoftmaxV2",
        "Pow",
        "ReduceMeanD",
        "Rsqrt",
        "BOOL",
        "INT64",
    ]
)
special = st.sampled_from(
    ["4,4096", '"4,4096"', 'a"b', "two\nlines", "cr\rhere", "caf\u00e9", "x\x00y", "\ufeffz"]
)
value = st.one_of(plain, plain, plain, special, st.text(max_size=6))


def _quote(v: str) -> str:
    return '"' + v.replace('"', '""') + '"'


@st.composite
def tables(draw):
    cols = draw(st.permutations(COLUMNS + draw(st.lists(st.sampled_from(EXTRA), unique=True))))
    if draw(st.booleans()):
        cols = [c for c in cols if c not in ("Type", "Input Shapes")] or cols
    hostile = draw(st.booleans())  # else well-formed rows the fast path must take
    clean = st.one_of(plain, st.sampled_from(["4,4096", 'a"b', "caf\u00e9"]))
    newline = draw(st.sampled_from(["\n", "\r\n"]))
    lines = [",".join(cols)]
    for _ in range(draw(st.integers(0, 40))):
        bad_row = hostile and draw(st.integers(0, 3)) == 0  # one hostile row in four
        cell = value if bad_row else clean
        styles = ["bare", "bare", "quoted", "raw"] if bad_row else ["bare", "quoted"]
        cells = []
        for _c in cols:
            v = draw(cell)
            style = draw(st.sampled_from(styles))
            if style == "quoted" or (style == "bare" and any(ch in v for ch in ',"\r\n')):
                v = _quote(v)
            cells.append(v)  # "raw" leaves hostile characters unescaped
        if bad_row and draw(st.integers(0, 2)) == 0:  # ragged
            cut = draw(st.integers(0, len(cells)))
            cells = cells[:cut] if cut < len(cells) else [*cells, "extra"]
        lines.append(",".join(cells))
        if draw(st.integers(0, 15)) == 0:
            lines.append("")
    data = (newline.join(lines) + newline).encode("utf-8")
    if draw(st.booleans()):
        data = "\ufeff".encode() + data
    if hostile and draw(st.integers(0, 5)) == 0:  # bytes that are not UTF-8
        at = draw(st.integers(len(lines[0]) + 1, max(len(lines[0]) + 1, len(data) - 1)))
        data = data[:at] + b"\xff\xe2\x82" + data[at:]
    if draw(st.integers(0, 3)) == 0:  # truncated anywhere after the header
        data = data[: draw(st.integers(len(lines[0]) + 1, len(data)))]
    return data


# A fixed set of 150 tables, over half of them hostile (a quarter ragged, some not UTF-8, a third
# truncated); ASCEND_AUDIT_FUZZ=more draws 500 fresh ones instead.
MORE = os.environ.get("ASCEND_AUDIT_FUZZ") == "more"


@settings(
    max_examples=500 if MORE else 150,
    derandomize=not MORE,
    database=None,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(data=tables(), small=st.booleans())
def test_fast_path_equals_the_csv_module_on_generated_and_hostile_tables(
    data, small, tmp_path, monkeypatch
):
    path = tmp_path / "kernel_details.csv"
    path.write_bytes(data)
    with monkeypatch.context() as m:
        if small:
            m.setattr(table_scan, "BUFFER_BYTES", 64)  # seams everywhere; long lines decline
        fast, slow, _taken = _both(path, m)
    assert fast == slow


HEAD = "Name,Type,Accelerator Core,Duration(us),Input Shapes,Output Shapes,Block Dim\n"
ROW = 'aclnnAdd_Add,Add,AI_CORE,2.5,"""4,4096""","""4,4096""",8\n'


@pytest.mark.parametrize(
    "odd",
    [
        'aclnnAdd_Add,Add,AI_CORE,2.5,"""4,4096""","""4,4096""",8,extra\n',  # one field too many
        'aclnnAdd_Add,Add,AI_CORE,2.5,"""4,4096""","""4,4096"""\n',  # one too few
        'aclnnAdd_Add,Add,AI_CORE,2.5,"""4,4096""",ab"c,d"e,8\n',  # a mid-field quote pair
        'aclnnAdd_Add,Add,AI_CORE,2.5,"""4,4096""",ab"c,d"e\n',  # … that hides a missing field
        'aclnnAdd_Add,Add,AI_CORE,2.5,"4,\n4096","""4,4096""",8\n',  # an embedded newline
        'aclnnAdd_Add,Add,AI_CORE,2.5,"""4,4096"""x,"""4,4096""",8\n',  # text after a quote
        'aclnnAdd_Add,Add,AI_CORE,2.5,"""4,4096""","""4,4096""",8\r\n',  # one CRLF line
        'aclnnAdd_Add,Add,AI\rCORE,2.5,"""4,4096""","""4,4096""",8\n',  # a bare CR
        'aclnnA\x00dd_Add,Add,AI_CPU,2.5,"""4,4096""","""4,4096""",8\n',  # a NUL (past 4 KiB)
        'aclnnAdd_Add,Add,AI_CPU,2.5,"""4,4096""","""4,\xff4096""",8\n',  # not UTF-8
        "\n\r\n",  # blank lines
    ],
)
def test_one_odd_row_among_clean_ones_reads_as_the_csv_module_reads_it(
    odd, tmp_path, monkeypatch, field_patterns
):
    path = tmp_path / "kernel_details.csv"
    data = (HEAD + ROW * 100 + odd + ROW * 100).encode()
    path.write_bytes(data.replace("\xff".encode(), b"\xff"))
    fast, slow, _taken = _both(path, monkeypatch)
    assert fast == slow


def test_hostile_shapes_decline_rather_than_misread():
    assert table_scan.shape_of(b',,"",') == (4, 2)
    assert table_scan.shape_of(b'""",""",') == (2, 0)  # an escaped quote beside a comma
    assert table_scan.shape_of(b'"') is None  # a quote that never closes
    assert table_scan.shape_of(b'""",') is None  # the escaped quote leaves it open
    assert table_scan.shape_of(b'"","') is None  # a quote inside a quoted field's end
    assert table_scan.shape_of(b",\r,") is None  # a bare CR inside a line
    assert table_scan.shape_of(b",,\r") == (3, -1)


def test_a_line_over_the_cap_declines_to_the_csv_module(tmp_path, monkeypatch):
    path = tmp_path / "kernel_details.csv"
    long = "x" * (table_scan.LINE_CAP + 10)
    path.write_text(
        "Name,Type,Accelerator Core,Duration(us)\n"
        f"A,Add,AI_CORE,1\n{long},Add,AI_CORE,2\nB,Add,AI_CORE,3\n"
    )
    fast, slow, taken = _both(path, monkeypatch)
    assert not taken and fast == slow and fast.rows == 2
    assert any("1 malformed row(s)" in p for p in fast.problems)


@pytest.mark.parametrize("extra", [-2, -1, 0, 1, 2])
@pytest.mark.parametrize("newline", ["\n", ""])
def test_lines_at_the_cap_read_as_the_csv_module_reads_them(extra, newline, tmp_path, monkeypatch):
    """A row of LINE_CAP bytes and around it, in the middle and as an unterminated last line."""
    path = tmp_path / "kernel_details.csv"
    prefix = "A,Add,AI_CORE,"
    row = prefix + "1" * (table_scan.LINE_CAP + extra - len(prefix) - len(newline or "\n"))
    for body in (f"{row}\nB,Add,AI_CORE,3\n", f"B,Add,AI_CORE,3\n{row}{newline}"):
        path.write_text("Name,Type,Accelerator Core,Duration(us)\n" + body)
        fast, slow, _taken = _both(path, monkeypatch)
        assert fast == slow


@settings(max_examples=300, deadline=None)
@given(
    data=st.binary(max_size=400).map(lambda b: b.replace(b"\r", b"\n")),
    size=st.integers(1, 40),
    grow=st.integers(0, 80),
)
def test_line_chunks_cuts_only_after_newlines_and_loses_nothing(data, size, grow):
    """The one chunker both readers use: every piece but the last ends in a newline and holds
    only whole lines, the pieces rebuild the file, and a line longer than the cap raises."""
    import io

    from ascend_audit.safe_io import LineTooLong, line_chunks

    cap = size + grow
    longest = max((len(line) for line in io.BytesIO(data)), default=0)
    seen: list[int] = []
    try:
        pieces = [bytes(p) for p in line_chunks(io.BytesIO(data), size, cap, seen.append)]
    except LineTooLong:
        assert longest > cap
        return
    assert longest <= cap
    assert b"".join(pieces) == data and sum(seen) == len(data)
    assert all(p.endswith(b"\n") for p in pieces[:-1]) and all(pieces)
    assert all(len(p) <= cap + size for p in pieces)


@pytest.mark.parametrize(
    "header",
    [
        "Step Id,Name,Type,Accelerator Core,Start Time(us),Duration(us),Input Shapes,"
        "Input Data Types",
        "Duration(us),Input Data Types,Accelerator Core,Name,Input Shapes,Type",  # dur first
        "Name,Duration(us),Accelerator Core,Input Shapes,Type",  # dur inside the key span
        "Accelerator Core,Type,Duration(us)",  # no name, duration last
    ],
)
@pytest.mark.parametrize("newline", ["\n", "\r\n"])
def test_quote_free_tables_take_the_plain_pattern_and_read_the_same(
    header, newline, tmp_path, monkeypatch
):
    """Without a quote the plain pattern reads the keys and durations, the AI CPU rows (found by
    their core column, whatever else says AI_CPU) keep their inputs; all as the csv module."""
    cols = header.split(",")
    values = {
        "Step Id": ["1", "2"],
        "Name": ["AI_CPU", "trans_Cast_1", "aclnnIndex_IndexAiCpu_Index", "N/A"],
        "Type": ["AI_CPU", "Cast", "Index", ""],
        "Accelerator Core": ["AI_CPU", "AI_CORE", " aicpu", "AI_CPU", "MIX_AIC"],
        "Start Time(us)": ["17.5", "AI_CPU"],
        "Duration(us)": ["1.5", "2", "N/A", "3e1", ""],
        "Input Shapes": ["4;4", "AI_CPU", ""],
        "Input Data Types": ["INT64;BOOL", "FLOAT16", "N/A"],
    }
    lines = [header]
    for i in range(3000):
        lines.append(
            ",".join(values[c][(i * 7 + k * 3) % len(values[c])] for k, c in enumerate(cols))
        )
        if i % 500 == 7:
            lines.append("")
    path = tmp_path / "kernel_details.csv"
    path.write_text(newline.join(lines) + newline)
    calls: list[int] = []
    real = table_scan._absorb_quick
    monkeypatch.setattr(
        table_scan,
        "_absorb_quick",
        lambda *a: calls.append(1) or real(*a),  # type: ignore[func-returns-value]
    )
    monkeypatch.setattr(table_scan, "BUFFER_BYTES", 4096)
    fast, slow, taken = _both(path, monkeypatch)
    assert taken and fast == slow and fast.rows == 3000
    inside = "Name,Duration(us),Accelerator Core" in header
    assert bool(calls) != inside  # the plain pattern, unless the duration is inside the span
    if "Input Shapes" in cols:
        assert fast.ai_cpu_by_name and any(o.input_shapes for o in fast.ai_cpu_by_name)


def test_quoted_tables_take_the_two_group_strict_pattern_and_read_the_same(
    tmp_path, monkeypatch, field_patterns
):
    """Quotes in the key span (a name with commas and doubled quotes) and in AI CPU rows' inputs:
    the strict walk captures (key span, duration) only, the span is split by the field pattern
    once per distinct key, and the AI CPU inputs come from the full pattern on their lines."""
    head = "Name,Type,Accelerator Core,Start Time(us),Duration(us),Input Shapes,Input Data Types\n"
    rows = [
        '"aclnnAdd,Add ""v2""",Add,AI_CORE,1.0,2.5,"""4,4096""",FLOAT16\n',
        'aclnnIndex_IndexAiCpu_Index,Index,AI_CPU,2.0,7.25,"""8;8""","INT64,BOOL"\n',
        'trans_Cast_1,,AI_VECTOR_CORE,3.0,N/A,"""1""",FLOAT\n',
        '"ArgSort,x",ArgSort,AI_CPU,4.0,3,"4,4",INT32\n',
    ]
    path = tmp_path / "kernel_details.csv"
    path.write_text(head + "".join(rows[i % 4] for i in range(2000)))
    calls: list[str] = []
    for name in ("_absorb_quick", "_absorb_found"):
        real = getattr(table_scan, name)
        monkeypatch.setattr(
            table_scan,
            name,
            lambda *a, _n=name, _r=real: calls.append(_n) or _r(*a),  # type: ignore[func-returns-value]
        )
    monkeypatch.setattr(table_scan, "BUFFER_BYTES", 8192)
    fast, slow, taken = _both(path, monkeypatch)
    assert taken and fast == slow and fast.rows == 2000
    assert "_absorb_found" in calls and "_absorb_quick" not in calls
    names = {o.name for o in fast.ai_cpu_by_name}
    assert names == {"aclnnIndex_IndexAiCpu_Index", "ArgSort,x"}
    assert any(o.input_shapes for o in fast.ai_cpu_by_name)
