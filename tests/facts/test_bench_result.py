"""Tests for `vllm bench serve --save-result` parsing."""

from __future__ import annotations

import json

import pytest
from shared_fixtures import DATA

from ascend_audit.facts.bench_result import parse_bench_result

BENCH = DATA / "bench"


def test_summary_result() -> None:
    r = parse_bench_result((BENCH / "vllm_bench_serve_qwen3_8b.json").read_text(), "b.json")
    assert r.problems == ()
    assert (r.num_prompts, r.completed, r.failed) == (200, 198, 2)
    assert r.success_rate == 0.99
    assert r.request_rate is None and r.max_concurrency == 32
    assert r.backend == "openai-chat" and r.model_id == "/models/Qwen3-8B"
    assert r.request_throughput == pytest.approx(3.20165, rel=1e-4)
    assert r.output_throughput == pytest.approx(819.622, rel=1e-4)
    assert (r.mean_ttft_ms, r.p99_ttft_ms) == (412.55113892, 1580.334)
    assert (r.mean_tpot_ms, r.p99_tpot_ms) == (36.0871, 51.907)
    assert r.p99_itl_ms == 88.46 and r.p99_e2el_ms == 13002.9
    assert r.latency("std", "ttft") == 301.22
    assert r.duration_s == pytest.approx(61.842, rel=1e-4)
    assert r.error_count == 0 and r.records == 1
    json.dumps(r.to_dict())


def test_detailed_result_with_error() -> None:
    r = parse_bench_result((BENCH / "vllm_bench_serve_detailed_with_error.json").read_text(), "d")
    assert r.problems == ()
    assert (r.num_prompts, r.completed, r.failed) == (10, 9, 1)
    assert r.request_rate == 4.0 and r.max_concurrency is None
    assert r.backend == "vllm"
    assert r.error_count == 1 and "ServerDisconnectedError" in r.errors[0]
    assert r.latency("p90", "ttft") == 290.2


def test_appended_json_lines_take_the_last() -> None:
    one = json.dumps({"completed": 5, "num_prompts": 5, "mean_ttft_ms": 10.0})
    two = json.dumps({"completed": 7, "num_prompts": 8, "mean_ttft_ms": 20.0})
    r = parse_bench_result(one + "\n" + two + "\n", "x.jsonl")
    assert r.records == 2 and r.completed == 7 and r.failed == 1 and r.mean_ttft_ms == 20.0
    assert r.problems == ("2 appended results; the last one is reported",)


def test_nan_and_wrong_types() -> None:
    text = (
        '{"completed": 0, "num_prompts": 10, "mean_ttft_ms": NaN, '
        '"p99_tpot_ms": "x", "duration": true}'
    )
    r = parse_bench_result(text, "x")
    assert r.completed == 0 and r.failed == 10 and r.mean_ttft_ms is None
    assert len(r.problems) == 3


@pytest.mark.parametrize(
    "text", ["", "   ", "{", "[1,2]", "\x00\xff garbage", '"str"', "{}", "[" * 100000, b"\xff\xfe"]
)
def test_hostile(text) -> None:
    r = parse_bench_result(text, "bad")
    assert r.problems
    assert r.completed is None
