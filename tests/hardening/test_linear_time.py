"""Time stays linear in input size: each parser handles N and 8N copies of real input with a CPU
time ratio well under what a quadratic parser would show (64x). Robust on a loaded 2-core machine:
`time.process_time` (CPU of this process only), the minimum of 3 runs, N grown until one run
takes >= 10 ms, the collector held off, and a generous bound of 20x (linear is ~8x)."""

from __future__ import annotations

import gc
import json
import tempfile
import time
from pathlib import Path

import pytest
from hardening.helpers import DATA
from shared_fixtures import fixture_files

from ascend_audit.facts import (
    bench_result,
    hccn,
    mounts,
    npu_smi,
    profiler,
    rank_table,
    serving_log,
    versions,
)
from ascend_audit.facts.serving_config.vllm_yaml import parse_vllm_yaml

RATIO, MIN_CPU = 20.0, 0.01


def _cpu(fn, arg, runs: int = 3) -> float:
    best = float("inf")
    for _ in range(runs):
        t = time.process_time()
        fn(arg)
        best = min(best, time.process_time() - t)
    return best


def _assert_linear(name, fn, make):
    # The collector's full passes scale with every object the whole test session holds, not
    # with this input: one pass before, none during the measurement.
    gc.collect()
    gc.disable()
    try:
        fn(make(1))  # first-call costs (compiled patterns, lazy imports) are not the input's
        n = 1
        while _cpu(fn, make(n), runs=1) < MIN_CPU and n < 1 << 16:
            n *= 2
        small, big = _cpu(fn, make(n)), _cpu(fn, make(8 * n))
    finally:
        gc.enable()
    ratio = big / max(small, 1e-6)
    assert ratio < RATIO, (
        f"{name}: {n} copies {small:.3f}s, {8 * n} copies {big:.3f}s ({ratio:.1f}x)"
    )


def _text(path: Path) -> str:
    return path.read_text(errors="replace")


NPU_SMI = _text(DATA / "driver" / "npu_smi_info_910b3_8npu.txt")
BOARD = "\n".join(_text(p) for p in fixture_files("npu_smi_board", "board_*"))
VERSION = "\n".join(_text(p) for p in fixture_files("version_files"))
HCCN = _text(DATA / "hccn" / "loop_explicit_headers_mixed.txt")
LOG = _text(DATA / "framework" / "vllm_ascend_v1_aclgraph_serve.log")
MOUNT = "36 35 98:0 /mnt1 /mnt2 rw,noatime master:1 - ext3 /dev/root rw,errors=continue\n"
KERNEL = DATA / "traces" / "no_aicpu" / "host1_1_20250101_ascend_pt" / "ASCEND_PROFILER_OUTPUT"


def _rank_table(n: int) -> str:
    servers = [
        {
            "server_id": f"10.0.{i // 250}.{i % 250}",
            "device": [
                {
                    "device_id": str(d),
                    "device_ip": f"192.168.{i % 250}.{d}",
                    "rank_id": str(i * 8 + d),
                }
                for d in range(8)
            ],
        }
        for i in range(n)
    ]
    return json.dumps(
        {"version": "1.0", "server_count": str(n), "server_list": servers, "status": "completed"}
    )


def _bench(n: int) -> str:
    return json.dumps(
        {
            "backend": "vllm",
            "completed": n,
            "num_prompts": n,
            "ttfts": [0.1] * n,
            "itls": [[0.01] * 4] * n,
            "errors": [""] * n,
            "mean_ttft_ms": 100.0,
            "request_throughput": 1.0,
        }
    )


def _yaml(n: int) -> str:
    return "".join(f"opt-{i}: value-{i}\n" for i in range(n)) + "tensor-parallel-size: 2\n"


def _csv_file(n: int) -> str:
    src = next(KERNEL.glob("*.csv")).read_text()
    head, _, body = src.partition("\n")
    d = Path(tempfile.mkdtemp(prefix="linear-"))
    p = d / "kernel_details.csv"
    p.write_text(head + "\n" + body.rstrip("\n") + ("\n" + body.rstrip("\n")) * (n - 1) + "\n")
    return str(p)


CASES = {
    "npu_smi.parse_info": (npu_smi.parse_info, lambda n: NPU_SMI * n),
    "npu_smi.parse_kv": (npu_smi.parse_kv, lambda n: BOARD * n),
    "versions.parse_key_values": (versions.parse_key_values, lambda n: VERSION * n),
    "mounts.parse_mountinfo": (mounts.parse_mountinfo, lambda n: MOUNT * (50 * n)),
    "hccn.parse_link": (hccn.parse_link, lambda n: HCCN * n),
    "hccn.parse_ip": (hccn.parse_ip, lambda n: HCCN * n),
    "rank_table.parse_rank_table": (rank_table.parse_rank_table, _rank_table),
    "serving_log.scan_serving_log": (
        lambda t: serving_log.scan_serving_log(enumerate(t.split("\n"), 1), "x.log"),
        lambda n: LOG * n,
    ),
    "serving_config.parse_vllm_yaml": (
        lambda t: parse_vllm_yaml(t, "x.yaml"),
        lambda n: _yaml(20 * n),
    ),
    "bench_result.parse_bench_result": (
        lambda t: bench_result.parse_bench_result(t, "b.json"),
        lambda n: _bench(20 * n),
    ),
    "profiler.summarize_kernels": (profiler.summarize_kernels, lambda n: _csv_file(20 * n)),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_parser_time_is_linear(name):
    fn, make = CASES[name]
    _assert_linear(name, fn, make)
