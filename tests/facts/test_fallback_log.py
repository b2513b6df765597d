"""Host-CPU fallback lines: real torch_npu wording, repeated lines, hostile input."""

from __future__ import annotations

import json

import pytest
from shared_fixtures import FIXTURES, fixture, fixture_files

from ascend_audit.facts.fallback_log import read_text_lines, scan_fallback_lines

LSTSQ = "fallback_logs/torch_npu_cpu_fallback_aten_linalg_lstsq_ERR01007_Ascend-pytorch-doc.txt"
DOUBLE = "fallback_logs/torch_npu_double_dtype_cast_warning_in_vllm_ascend_v0_log_shen-shanshan.txt"


def test_cpu_fallback_fixture_names_the_operator():
    s = scan_fallback_lines(read_text_lines(fixture(LSTSQ)))
    assert s.lines_scanned == 6
    (hit,) = s.hits
    assert (hit.kind, hit.operator, hit.lines, hit.distinct) == (
        "cpu_fallback",
        "aten::linalg_lstsq.out",
        1,
        1,
    )
    assert hit.first_lines == (1,)
    assert hit.excerpts[0].startswith("[W compiler_depend.ts:51] Warning: CAUTION")
    assert s.cpu_fallback_ops == ("aten::linalg_lstsq.out",)


def test_dtype_cast_glued_to_progress_bar_line():
    s = scan_fallback_lines(read_text_lines(fixture(DOUBLE)))
    (hit,) = s.hits
    assert (hit.kind, hit.operator, hit.first_lines) == ("dtype_cast", "double->float", (9,))
    assert hit.excerpts[0].startswith("[rank0]:[W312 03:10:23")
    assert "Processed prompts" not in hit.excerpts[0]
    assert s.cpu_fallback_ops == ()


def test_every_fallback_fixture_yields_a_hit():
    files = fixture_files("fallback_logs", "*.txt")
    if not files:
        pytest.skip("real fixtures ../shared/fixtures/fallback_logs are not beside this checkout")
    for p in files:
        s = scan_fallback_lines(read_text_lines(p), source=str(p))
        assert len(s.hits) == 1, p.name
        assert s.problems == ()


def test_framework_logs_only_show_the_double_cast():
    logs = sorted((FIXTURES / "framework").glob("*.md"))
    if not logs:
        pytest.skip("real fixtures ../shared/fixtures/framework are not beside this checkout")
    found = {
        p.name: [(h.kind, h.operator) for h in scan_fallback_lines(read_text_lines(p)).hits]
        for p in logs
    }
    assert sorted(found.values()) == [[], [("dtype_cast", "double->float")]]


def test_repeated_lines_are_deduplicated_but_counted():
    line = (
        "[W610 18:26:0{i}.055846726 VariableFallbackKernel.cpp:250] Warning: CAUTION: The "
        "operator 'aten::isin.Tensor_Tensor_out' is not currently supported on the NPU backend "
        "and will fall back to run on the CPU. This may have performance implications."
    )
    lines = [line.format(i=i) for i in range(5)] + ["INFO unrelated"] * 3
    lines += ["(VllmWorker rank=1 pid=7) " + line.format(i=9)]
    s = scan_fallback_lines(lines)
    (hit,) = s.hits
    assert hit.lines == 6 and hit.distinct == 1
    assert hit.first_lines == (1,)
    assert s.total_lines == 6 and s.lines_scanned == 9


def test_distinct_operators_and_kinds_with_prefixes():
    lines = [
        "(RayWorkerWrapper pid=20614) [rank0]:[W711 09:57:36.315174395 compiler_depend.ts:164] "
        "Warning: Warning: Device do not support double dtype now, dtype cast repalce with float. "
        "(function operator())",
        "Warning: CAUTION: The operator 'torchvision::nms' is not currently supported on the NPU b",
        "2025-01-01 WARNING something: fallback to CPU for aten::nonzero",
        "[WARNING] op NonZero runs on AICPU, performance may degrade",
        "The operator 'aten::foo' is not currently supported on the MPS backend and will fall "
        "back to run on the CPU",
        "INFO 03-12 vllm: CPU blocks: 8738, fallback disabled",
    ]
    s = scan_fallback_lines(lines)
    got = [(h.kind, h.operator, h.first_lines) for h in s.hits]
    assert got == [
        ("dtype_cast", "double->float", (1,)),
        ("cpu_fallback", "torchvision::nms", (2,)),
        ("cpu_fallback", "aten::nonzero", (3,)),
        ("ai_cpu", "NonZero", (4,)),
    ]
    assert [h.operator for h in s.by_kind("cpu_fallback")] == ["torchvision::nms", "aten::nonzero"]


def test_accepts_numbered_pairs_and_keeps_their_numbers():
    s = scan_fallback_lines(
        [
            (41, "x"),
            (42, "Warning: Device do not support double dtype now, dtype cast repalce with float."),
        ]
    )
    assert s.hits[0].first_lines == (42,)


def test_evidence_is_capped():
    lines = [
        f"[W compiler_depend.ts:51] Warning: CAUTION: The operator 'aten::op{i % 2}' is not "
        f"currently supported on the NPU backend ... call {i}"
        for i in range(50)
    ]
    s = scan_fallback_lines(lines)
    assert [h.operator for h in s.hits] == ["aten::op0", "aten::op1"]
    assert all(h.lines == 25 and h.distinct == 25 and len(h.first_lines) == 5 for h in s.hits)


def test_long_lines_are_cut_and_reported(tmp_path):
    p = tmp_path / "big.log"
    tail = "Warning: CAUTION: The operator 'aten::late' is not currently supported on the NPU b"
    head = "Warning: CAUTION: The operator 'aten::early' is not currently supported on the NPU b"
    p.write_text(head + "x" * 300_000 + tail + "\nnext line\n" + head + "\n")
    pairs = list(read_text_lines(p, max_line=1000))
    assert [n for n, _ in pairs] == [1, 2, 3]
    assert all(len(t) <= 1001 for _, t in pairs)
    s = scan_fallback_lines(pairs, max_line=1000)
    assert s.truncated_lines == 1 and "cut" in s.problems[0]
    (hit,) = s.hits
    assert hit.operator == "aten::early" and hit.lines == 2 and hit.first_lines == (1, 3)
    assert hit.distinct == 2  # the lines differ after the warning, so both are evidence


def test_non_utf8_binary_and_missing_files(tmp_path):
    p = tmp_path / "mixed.log"
    p.write_bytes(
        b"\xff\xfe\x00garbage\n"
        + bytes(range(256))
        + b"\nWarning: CAUTION: The operator 'aten::caf\xe9' is not currently supported on the "
        b"NPU backend\r\n"
    )
    s = scan_fallback_lines(read_text_lines(p))
    assert s.lines_scanned == 4
    assert [h.operator for h in s.hits] == ["aten::caf\ufffd"]
    assert list(read_text_lines(tmp_path / "missing.log")) == []
    assert scan_fallback_lines(read_text_lines(tmp_path / "missing.log")).hits == ()
    empty = tmp_path / "empty.log"
    empty.write_bytes(b"")
    assert scan_fallback_lines(read_text_lines(empty)).lines_scanned == 0


def test_a_failing_iterator_is_a_problem_not_a_crash():
    def broken():
        yield "Warning: Device do not support double dtype now, dtype cast repalce with float."
        raise OSError("disk went away")

    s = scan_fallback_lines(broken(), source="x.log")
    assert len(s.hits) == 1 and "disk went away" in s.problems[0]


def test_non_string_items_are_ignored():
    s = scan_fallback_lines(
        [
            None,
            3,
            b"Warning: Device do not support double dtype now, dtype cast repalce with float.",
        ]
    )  # type: ignore[list-item]
    assert [h.operator for h in s.hits] == ["double->float"]
    assert s.lines_scanned == 1  # only the bytes line was text
    assert json.loads(json.dumps(s.to_dict()))["hits"][0]["operator"] == "double->float"
