"""Framework layer: FWK-STACK/GRAPH/KV/WGT/E2E on real fixtures, own samples and hostile input."""

from __future__ import annotations

import json
import os
import stat
import time
from pathlib import Path

import pytest
from shared_fixtures import DATA, fixture
from standins import run_node

from ascend_audit.context import Inputs
from ascend_audit.facts.probe import PROBE_MARK
from ascend_audit.model import Status, Verdict

V0 = "framework/vllm-ascend_v0.7.4dev_V0_eager_pytest_sliding_window_npu_blocks_log.md"
V1 = "framework/vllm-ascend_v0.7.4dev_V1_serve_qwen2.5-7b_no_graph_capture_log.md"
MINDIE = "framework/mindie_service_default_config.json"
FW = DATA / "framework"
ACLGRAPH = FW / "vllm_ascend_v1_aclgraph_serve.log"
FALLBACK = FW / "vllm_ascend_v1_graph_fallback.log"
STACK_LOG = FW / "vllm_ascend_stack_errors.log"
YAML = FW / "vllm_serve_config.yaml"
BENCH = DATA / "bench" / "vllm_bench_serve_qwen3_8b.json"
CHECKS = ("FWK-STACK-001", "FWK-GRAPH-001", "FWK-KV-001", "FWK-WGT-001", "FWK-E2E-001")


def audit(tmp_path: Path, policy: str = "", **inputs):
    root, bindir = tmp_path / "root", tmp_path / "bin"
    root.mkdir(exist_ok=True)
    bindir.mkdir(exist_ok=True)
    ins = Inputs(**{k: tuple(map(str, v)) if isinstance(v, list) else v for k, v in inputs.items()})
    return run_node(root, bindir, policy, layers=["framework"], inputs=ins)


def judge(tmp_path: Path, check: str, policy: str = "", **inputs):
    return audit(tmp_path, policy, **inputs).result(check)


def write(tmp_path: Path, name: str, text: str | bytes) -> Path:
    p = tmp_path / name
    p.write_bytes(text if isinstance(text, bytes) else text.encode())
    return p


def cites(r, source: str) -> bool:
    """Some evidence names `source:lineno` (or the source) with the line as excerpt."""
    return any(e.source.startswith(str(source)) and e.excerpt for e in r.evidence)


# --- no evidence ------------------------------------------------------------------------------


def test_no_evidence_skips_every_check_and_the_layer_is_missing(tmp_path):
    report = audit(tmp_path)
    for cid in CHECKS:
        r = report.result(cid)
        assert r.status is Status.SKIP, (cid, r.summary)
    assert "no framework evidence" in report.result("FWK-GRAPH-001").summary
    assert report.layer("framework").verdict is Verdict.MISSING


# --- real fixtures ----------------------------------------------------------------------------


def test_a_pasted_collect_env_alone_is_not_a_ready_framework(tmp_path):
    """vllm-ascend#1993's collect_env: the stack matches (FWK-STACK-001 PASS) but nothing shows
    the engine running. The layer was READY on it before FWK-LIFE-001 became its core check."""
    paste = fixture(
        "field/collect_env/collect_env_vllm-ascend0.7.3_310P3_npu6_2chip_25.0.rc1.1_"
        "cann8.1.RC1_kylinV10_vllm-ascend-1993.txt"
    )
    report = audit(tmp_path, serving_logs=[paste])
    assert report.result("FWK-STACK-001").status is Status.PASS
    life = report.result("FWK-LIFE-001")
    assert life.status is Status.FAIL
    assert "READY only on its proof" in life.summary and "collect_env.py output" in life.summary
    assert report.layer("framework").verdict is Verdict.NOT_READY


def test_v0_fixture_eager_fails_graph_with_cited_lines(tmp_path):
    log = fixture(V0)
    r = judge(tmp_path, "FWK-GRAPH-001", serving_logs=[log])
    assert r.status is Status.FAIL
    assert f"{log}:28" in r.summary
    assert any(e.kind == "log" and e.source == f"{log}:28" for e in r.evidence)


def test_v0_fixture_block_counts_and_load_times(tmp_path):
    log = fixture(V0)
    report = audit(tmp_path, serving_logs=[log])
    kv = report.result("FWK-KV-001")
    assert any(e.source == f"{log}:111" and "# npu blocks: 6250" in e.excerpt for e in kv.evidence)
    wgt = report.result("FWK-WGT-001")
    # The pytest session ends in "AssertionError: Error in memory profiling" (worker.py:227):
    # the engine died, so a fast load is no proof of a working service (issue 14).
    assert wgt.status is Status.WARN and "the engine died" in wgt.summary
    assert "2.14 s" in wgt.summary and cites(wgt, f"{log}:128")
    fw = report.inventory["framework"]
    assert fw["engine"] == "vllm" and fw["graph_mode"] == "eager" and fw["load_seconds"] == 2.14


def test_v1_fixture_no_graph_capture_fails_graph_and_reads_kv(tmp_path):
    log = fixture(V1)
    report = audit(tmp_path, serving_logs=[log])
    g = report.result("FWK-GRAPH-001")
    assert g.status is Status.FAIL and f"{log}:70" in g.summary
    kv = report.result("FWK-KV-001")
    assert kv.status is Status.PASS
    assert "744,048 tokens" in kv.summary and cites(kv, f"{log}:68")
    assert report.inventory["framework"]["kv_tokens"] == 744048


def test_v1_fixture_eager_passes_when_policy_allows(tmp_path):
    policy = "[framework]\nrequire_graph_mode = false\n"
    r = judge(tmp_path, "FWK-GRAPH-001", policy, serving_logs=[fixture(V1)])
    assert r.status is Status.PASS and "does not require" in r.summary


def test_mindie_only_node_config(tmp_path):
    cfg = fixture(MINDIE)
    report = audit(tmp_path, serving_configs=[cfg])
    kv = report.result("FWK-KV-001")
    assert kv.status is Status.PASS
    assert "cacheBlockSize 128" in kv.summary
    assert any(e.source == f"{cfg}:101" and "cacheBlockSize" in e.excerpt for e in kv.evidence)
    assert any("npuMemSize" in e.excerpt for e in kv.evidence)
    assert report.result("FWK-GRAPH-001").status is Status.SKIP
    assert "MindIE" in report.result("FWK-GRAPH-001").summary
    assert report.inventory["framework"]["engine"] == "mindie"


def test_mindie_block_size_not_128_warns(tmp_path):
    text = fixture(MINDIE).read_text().replace('"cacheBlockSize" : 128', '"cacheBlockSize" : 64')
    r = judge(tmp_path, "FWK-KV-001", serving_configs=[write(tmp_path, "config.json", text)])
    assert r.status is Status.WARN and "cacheBlockSize 64" in r.summary


def test_mindie_npu_mem_size_zero_fails(tmp_path):
    text = fixture(MINDIE).read_text().replace('"npuMemSize" : -1', '"npuMemSize" : 0')
    r = judge(tmp_path, "FWK-KV-001", serving_configs=[write(tmp_path, "config.json", text)])
    assert r.status is Status.FAIL and "npuMemSize 0" in r.summary


# --- FWK-GRAPH-001 ------------------------------------------------------------------------------


def test_graph_pass_on_aclgraph_capture(tmp_path):
    r = judge(tmp_path, "FWK-GRAPH-001", serving_logs=[ACLGRAPH])
    assert r.status is Status.PASS
    assert "FULL_AND_PIECEWISE" in r.summary and f"{ACLGRAPH}:" in r.summary


def test_graph_fallback_names_requested_and_effective(tmp_path):
    r = judge(tmp_path, "FWK-GRAPH-001", serving_logs=[FALLBACK])
    assert r.status is Status.FAIL
    assert "requested cudagraph_mode FULL_DECODE_ONLY but NONE took effect" in r.summary
    assert cites(r, f"{FALLBACK}:2") and cites(r, f"{FALLBACK}:3")


def test_graph_enforce_eager_on_vllm_only_argv_config(tmp_path):
    yaml = write(tmp_path, "serve.yaml", "model: /models/Qwen3-8B\nenforce-eager: true\n")
    r = judge(tmp_path, "FWK-GRAPH-001", serving_configs=[yaml])
    assert r.status is Status.FAIL
    assert any(e.source == f"{yaml}:2" and "enforce-eager" in e.excerpt for e in r.evidence)


def test_graph_legacy_keys_warn(tmp_path):
    r = judge(tmp_path, "FWK-GRAPH-001", serving_configs=[YAML])
    assert r.status is Status.WARN
    assert "torchair_graph_config" in r.summary and "0.12" in r.summary
    assert cites(r, f"{YAML}:10")


def test_graph_legacy_keys_fine_on_old_vllm_ascend(tmp_path):
    log = write(tmp_path, "old.log", "INFO [api_server.py:1] vLLM API server version 0.11.0\n")
    r = judge(tmp_path, "FWK-GRAPH-001", serving_configs=[YAML], serving_logs=[log])
    # No legacy-key finding on 0.11; graph mode asked for but no capture line: at most WARN.
    assert r.status is Status.WARN
    assert "legacy" not in r.summary and "not proven" in r.summary


def test_graph_env_conflicts_in_log_fail(tmp_path):
    r = judge(tmp_path, "FWK-GRAPH-001", serving_logs=[STACK_LOG])
    assert r.status is Status.FAIL
    assert cites(r, f"{STACK_LOG}:10") and cites(r, f"{STACK_LOG}:11")
    assert "graph capture failed" in r.summary


# --- FWK-KV-001 ---------------------------------------------------------------------------------


def test_kv_pass_on_aclgraph_log(tmp_path):
    r = judge(tmp_path, "FWK-KV-001", serving_logs=[ACLGRAPH])
    assert r.status is Status.PASS
    assert "block_size 128" in r.summary and "627,968 tokens" in r.summary


def test_kv_block_16_and_negative_memory_fail(tmp_path):
    r = judge(tmp_path, "FWK-KV-001", serving_logs=[FALLBACK])
    assert r.status is Status.FAIL
    assert "block_size 16" in r.summary and "no memory left for the KV cache" in r.summary
    assert cites(r, f"{FALLBACK}:6") and cites(r, f"{FALLBACK}:10")


@pytest.mark.parametrize(("gmu", "status"), [(0.9, "PASS"), (0.95, "WARN"), (0.97, "FAIL")])
def test_kv_memory_utilisation_thresholds(tmp_path, gmu, status):
    yaml = write(tmp_path, "s.yaml", f"model: /m\nblock-size: 128\ngpu-memory-utilization: {gmu}\n")
    r = judge(tmp_path, "FWK-KV-001", serving_configs=[yaml])
    assert r.status.value == status, r.summary
    assert cites(r, f"{yaml}:3")


def test_kv_capacity_below_one_request_fails(tmp_path):
    policy = "[framework]\nmax_model_len = 1000000\n"
    r = judge(tmp_path, "FWK-KV-001", policy, serving_logs=[ACLGRAPH])
    assert r.status is Status.FAIL and "less than one 1,000,000-token request" in r.summary


def test_kv_alloc_conf_max_split_warns(tmp_path):
    log = write(
        tmp_path,
        "a.log",
        ACLGRAPH.read_text().replace(
            "PYTORCH_NPU_ALLOC_CONF=expandable_segments:True",
            "PYTORCH_NPU_ALLOC_CONF=max_split_size_mb:256",
        ),
    )
    r = judge(tmp_path, "FWK-KV-001", serving_logs=[log])
    assert r.status is Status.WARN and "max_split_size_mb" in r.summary


# --- FWK-WGT-001 --------------------------------------------------------------------------------


def test_weights_pass_with_rate(tmp_path):
    r = judge(tmp_path, "FWK-WGT-001", serving_logs=[ACLGRAPH])
    assert r.status is Status.PASS
    assert "4.61 s" in r.summary and "GB/s" in r.summary


def test_weights_slow_load_fails_against_policy(tmp_path):
    policy = "[framework]\nmax_load_seconds = 60\n"
    r = judge(tmp_path, "FWK-WGT-001", policy, serving_logs=[FALLBACK])
    assert r.status is Status.FAIL
    assert "190.42 s" in r.summary and "60 s" in r.summary


def test_weights_pt_shards_warn(tmp_path):
    r = judge(tmp_path, "FWK-WGT-001", serving_logs=[FALLBACK])
    assert r.status is Status.WARN
    assert "pt checkpoint shards" in r.summary and cites(r, f"{FALLBACK}:7")


@pytest.mark.parametrize(
    ("line", "word"), [("cpu-offload-gb: 8", "cpu-offload-gb"), ("load-format: dummy", "dummy")]
)
def test_weights_offload_or_dummy_fail(tmp_path, line, word):
    yaml = write(tmp_path, "w.yaml", f"model: /models/x\n{line}\n")
    r = judge(tmp_path, "FWK-WGT-001", serving_configs=[yaml])
    assert r.status is Status.FAIL and word in r.summary
    assert cites(r, f"{yaml}:2")


def test_weights_model_dir_of_bin_shards_warns(tmp_path):
    root = tmp_path / "root"
    model = root / "models" / "m"
    model.mkdir(parents=True)
    for n in (
        "pytorch_model-00001-of-00002.bin",
        "pytorch_model-00002-of-00002.bin",
        "config.json",
    ):
        (model / n).write_text("x")
    yaml = write(tmp_path, "w.yaml", "model: /models/m\n")
    r = judge(tmp_path, "FWK-WGT-001", serving_configs=[yaml])
    assert r.status is Status.WARN and "2 .bin/.pt shards" in r.summary


# --- FWK-E2E-001 --------------------------------------------------------------------------------


def test_e2e_pass_with_figures_side_by_side(tmp_path):
    data = json.loads(BENCH.read_text())
    policy = (
        f"[targets]\nttft_p99_ms = {data['p99_ttft_ms'] + 1}\nmin_output_throughput = 1\n"
        f"max_failed_requests = {data['num_prompts'] - data['completed']}\n"
    )
    r = judge(tmp_path, "FWK-E2E-001", policy, bench_results=[BENCH])
    assert r.status is Status.PASS, r.summary
    assert "p99 TTFT" in r.summary and "target ≤" in r.summary


def test_e2e_misses_fail(tmp_path):
    policy = "[targets]\nttft_p99_ms = 1\ntpot_p99_ms = 0.001\nmin_output_throughput = 1e9\n"
    r = judge(tmp_path, "FWK-E2E-001", policy, bench_results=[BENCH])
    assert r.status is Status.FAIL
    for label in ("p99 TTFT", "p99 TPOT", "output throughput"):
        assert label in r.summary


def test_e2e_without_bench_skips(tmp_path):
    r = judge(tmp_path, "FWK-E2E-001", serving_logs=[ACLGRAPH])
    assert r.status is Status.SKIP


# --- the probe with stand-in interpreters -------------------------------------------------------


def fake_python(tmp_path: Path, body: str) -> Path:
    p = tmp_path / "fakepy" / "python"
    p.parent.mkdir(exist_ok=True)
    p.write_text("#!/bin/sh\n" + body)
    p.chmod(p.stat().st_mode | stat.S_IEXEC)
    return p


def canned(
    tmp_path: Path, torch: str, npu: str | None, error: str | None = None, cann: str | None = None
) -> Path:
    result = {
        "probe": 1,
        "deep": cann is not None,
        "npu": {"device_count": 8, "cann_version": cann} if cann else {},
        "python": {"version": "3.11.7", "executable": "/venv/bin/python"},
        "packages": {"torch": torch, "torch_npu": npu},
        "torch": {"imported": True, "version": torch},
        "torch_npu": {"imported": error is None, "version": npu}
        | ({"error_type": "ImportError", "error": error} if error else {}),
        "errors": [],
    }
    out = tmp_path / "probe.out"
    out.write_text(PROBE_MARK + json.dumps(result) + "\n")
    return fake_python(tmp_path, f"cat '{out}'\n")


def test_probe_torch_mismatch_fails(tmp_path):
    err = "ImportError: /v/torch_npu/lib/libtorch_npu.so: undefined symbol: _ZN3c10"
    py = canned(tmp_path, "2.13.0+cpu", "2.9.0", err)
    r = judge(tmp_path, "FWK-STACK-001", python=str(py))
    assert r.status is Status.FAIL
    assert "built for another torch" in r.summary and "does NOT match" in r.summary
    assert any(e.kind == "probe" for e in r.evidence)
    assert any(e.source.startswith("ascend_audit/data/compat_torch_npu.csv:") for e in r.evidence)


def test_probe_cuda_torch_fails(tmp_path):
    err = "RuntimeError: Two accelerators cannot be used at the same time in PyTorch: npu and cuda."
    py = canned(tmp_path, "2.9.0+cu128", "2.9.0", err)
    r = judge(tmp_path, "FWK-STACK-001", python=str(py))
    assert r.status is Status.FAIL and "CUDA build" in r.summary


def test_probe_ok_and_versions_in_inventory(tmp_path):
    py = canned(tmp_path, "2.9.0+cpu", "2.9.0")
    report = audit(tmp_path, python=str(py))
    r = report.result("FWK-STACK-001")
    assert r.status is Status.PASS, r.summary
    assert report.inventory["versions"]["torch_npu"] == "2.9.0"


def test_probe_unknown_pairing_warns(tmp_path):
    py = canned(tmp_path, "2.99.0+cpu", "2.99.0", cann="8.5.0")
    r = judge(tmp_path, "FWK-STACK-001", python=str(py))
    assert r.status is Status.WARN and "not in the table of version" in r.summary


def test_probe_hanging_interpreter_is_error_in_bounded_time(tmp_path):
    py = fake_python(tmp_path, "sleep 30\n")
    t = time.monotonic()
    r = judge(tmp_path, "FWK-STACK-001", "[framework]\nprobe_timeout = 1\n", python=str(py))
    assert time.monotonic() - t < 15
    assert r.status is Status.ERROR and "did not finish within 1 s" in r.summary
    assert r.evidence and r.evidence[0].kind == "probe"


def test_probe_not_python_is_error(tmp_path):
    py = fake_python(tmp_path, "echo 'garbage %$# not json'\n")
    r = judge(tmp_path, "FWK-STACK-001", python=str(py))
    assert r.status is Status.ERROR and "like a Python interpreter" in r.summary
    assert "garbage" in r.evidence[0].excerpt


def test_probe_missing_interpreter_is_error(tmp_path):
    r = judge(tmp_path, "FWK-STACK-001", python=str(tmp_path / "nope" / "python"))
    assert r.status is Status.ERROR and "cannot be executed" in r.summary


def test_stack_errors_in_log_fail_with_lines(tmp_path):
    r = judge(tmp_path, "FWK-STACK-001", serving_logs=[STACK_LOG])
    assert r.status is Status.FAIL
    for n in (4, 6, 7, 8):
        assert cites(r, f"{STACK_LOG}:{n}")


# --- hostile input ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "text"),
    [("bad.json", '{"BackendConfig": {'), ("bad.yaml", "model: [unclosed\n  - : :\n")],
)
def test_malformed_config_is_error_with_evidence(tmp_path, name, text):
    cfg = write(tmp_path, name, text)
    report = audit(tmp_path, serving_configs=[cfg])
    for cid in ("FWK-GRAPH-001", "FWK-KV-001", "FWK-WGT-001"):
        r = report.result(cid)
        assert r.status is Status.ERROR, (cid, r.summary)
        assert r.evidence[0].source == str(cfg) and r.evidence[0].excerpt


def test_binary_garbage_log_is_error(tmp_path):
    log = write(tmp_path, "garbage.log", os.urandom(200_000))
    r = judge(tmp_path, "FWK-GRAPH-001", serving_logs=[log])
    assert r.status is Status.ERROR and "not a text log" in r.summary


def test_malformed_bench_is_error(tmp_path):
    bench = write(tmp_path, "b.json", '{"completed": 3, ')
    r = judge(tmp_path, "FWK-E2E-001", bench_results=[bench])
    assert r.status is Status.ERROR and r.evidence[0].source == str(bench)


def test_missing_inputs_are_errors(tmp_path):
    report = audit(
        tmp_path, serving_logs=[tmp_path / "no.log"], bench_results=[tmp_path / "no.json"]
    )
    assert report.result("FWK-GRAPH-001").status is Status.ERROR
    assert report.result("FWK-E2E-001").status is Status.ERROR


def test_huge_log_is_scanned_in_bounded_time(tmp_path):
    head = ACLGRAPH.read_text()
    metric = (
        "INFO 09-02 10:12:30 [loggers.py:127] Engine 000: Avg prompt throughput: 0.0 tokens/s, "
        "Running: 0 reqs, Waiting: 0 reqs, GPU KV cache usage: 3.0%, Prefix cache hit rate: 0.0%\n"
    )
    log = tmp_path / "huge.log"
    with open(log, "w") as fh:
        fh.write(head)
        fh.write(metric * (50 * 2**20 // len(metric)))
    t = time.monotonic()
    report = audit(tmp_path, serving_logs=[log])
    assert time.monotonic() - t < 120
    assert report.result("FWK-GRAPH-001").status is Status.PASS
    assert report.result("FWK-KV-001").status is Status.PASS
