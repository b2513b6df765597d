"""Profiler SQLite exports read as exactly the same kernel summary as their kernel_details.csv."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest
from profiler_db_writer import csv_to_db
from shared_fixtures import fixture_files

from ascend_audit.facts.profiler import summarize_kernels
from ascend_audit.facts.profiler_db import is_profiler_db, summarize_profiler_db

KERNEL_FIXTURES = fixture_files("msprof", "kernel_details_*.csv")


def _same(a, b) -> None:  # type: ignore[no-untyped-def]
    assert a.rows == b.rows
    assert a.total_us == pytest.approx(b.total_us, abs=0.01)
    assert a.ai_cpu_share == pytest.approx(b.ai_cpu_share, abs=1e-9)
    assert [(o.op_type, o.count) for o in a.ai_cpu_by_type] == [
        (o.op_type, o.count) for o in b.ai_cpu_by_type
    ]
    assert [(o.op_type, o.name, o.input_dtypes) for o in a.ai_cpu_by_name] == [
        (o.op_type, o.name, o.input_dtypes) for o in b.ai_cpu_by_name
    ]
    assert dict(a.cores).keys() == dict(b.cores).keys()
    assert a.attention_sequences == b.attention_sequences
    assert a.transdata.count == b.transdata.count and a.cast.count == b.cast.count


def test_real_csv_profiles_and_their_db_agree(tmp_path):
    if not KERNEL_FIXTURES:
        pytest.skip("real fixtures ../shared/fixtures/msprof are not beside this checkout")
    for csv in KERNEL_FIXTURES:
        db = tmp_path / csv.stem / "ascend_pytorch_profiler_0.db"
        csv_to_db(csv, db)
        _same(summarize_kernels(csv), summarize_profiler_db(db))
        assert summarize_profiler_db(db).layout == "profiler_db"


def test_db_is_opened_read_only_and_left_untouched(tmp_path):
    csv = tmp_path / "kernel_details.csv"
    csv.write_text(
        "Name,Type,Accelerator Core,Start Time(us),Duration(us),Input Shapes,Input Data Types\n"
        'aclnnCumsum_CumsumAiCpu_CumsumAiCpu,CumsumAiCpu,AI_CPU,1.0,40.5,"""8""",INT64\n'
        "aclnnAdd_AddAiCore_Add,Add,AI_VECTOR_CORE,50.0,9.5,,BF16\n"
    )
    db = tmp_path / "msprof_20260101120000.db"
    csv_to_db(csv, db)
    before = db.read_bytes()
    db.chmod(0o444)
    s = summarize_profiler_db(db)
    assert s.ai_cpu_by_type[0].op_type == "CumsumAiCpu" and s.ai_cpu.total_us == 40.5
    assert s.ai_cpu_by_type[0].input_dtypes == ("INT64",)
    assert db.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        "kernel_details.csv",
        "msprof_20260101120000.db",
    ]


def test_file_names():
    assert is_profiler_db("ascend_pytorch_profiler_3.db")
    assert is_profiler_db("ascend_pytorch_profiler.db") and is_profiler_db(
        "msprof_20251120101010.db"
    )
    assert not is_profiler_db("analysis.db") and not is_profiler_db("msprof_1.db")


def test_hostile_databases_never_raise(tmp_path):
    empty = tmp_path / "a.db"
    empty.write_bytes(b"")
    assert "not an SQLite database" in summarize_profiler_db(empty).problems[0]
    junk = tmp_path / "b.db"
    junk.write_bytes(b"SQLite format 3\x00" + b"\xff" * 5000)
    assert summarize_profiler_db(junk).problems
    other = tmp_path / "c.db"
    con = sqlite3.connect(other)
    con.execute("CREATE TABLE NPU_MEM (x)")
    con.commit()
    con.close()
    s = summarize_profiler_db(other)
    assert s.layout == "unknown"
    assert "no TASK, COMPUTE_TASK_INFO, STRING_IDS table (tables found: NPU_MEM)" in s.problems[0]
    assert summarize_profiler_db(tmp_path / "absent.db").problems
    bad = tmp_path / "d.db"
    csv = tmp_path / "k.csv"
    csv.write_text("Name,Type,Accelerator Core,Start Time(us),Duration(us)\nX,X,AI_CPU,1,2\n")
    csv_to_db(csv, bad)
    con = sqlite3.connect(bad)
    con.execute("UPDATE TASK SET endNs = 'soon'")
    con.commit()
    con.close()
    s = summarize_profiler_db(bad)
    assert any("1 task(s) without a valid start/end time" in p for p in s.problems), s.problems
    assert s.rows == 0 or s.total_us >= 0


def test_many_rows_stream_in_batches(tmp_path):
    csv = tmp_path / "kernel_details.csv"
    lines = ["Name,Type,Accelerator Core,Start Time(us),Duration(us)"]
    lines += [f"Add{i},Add,AI_VECTOR_CORE,{i},1.5" for i in range(150_000)]
    lines += ["ArgSort1,ArgSort,AI_CPU,200000,3.0"]
    csv.write_text("\n".join(lines) + "\n")
    db = tmp_path / "ascend_pytorch_profiler_0.db"
    csv_to_db(csv, db)
    s = summarize_profiler_db(db)
    assert s.rows == 150_001 and s.ai_cpu.count == 1
    _same(summarize_kernels(csv), s)
    assert Path(db).stat().st_size > 0
