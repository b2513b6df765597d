"""FWK-GRAPH-001 on real lines of vLLM and vllm-ascend across versions: PASS only on proof,
a by-design downgrade is a WARN naming what was requested as the log says it, a refused mode,
a V0 or eager fallback is a FAIL naming it."""

from __future__ import annotations

from pathlib import Path

import pytest
from shared_fixtures import DATA
from standins import run_inputs

from ascend_audit.facts.serving_log import scan_serving_log
from ascend_audit.facts.serving_log.graph import fallback_reason, requested_of
from ascend_audit.model import Status, Verdict

LOGS = DATA / "serving_logs"
HEAD = "INFO 08-07 09:10:40 [cli_args.py:261] non-default args: {'model': '/models/m'}\n"
UP = "INFO:     Application startup complete.\n"

# (line as logged, where it comes from, signal, category, value)
REAL_LINES = [
    (  # vllm-ascend issue 13346 (v0.11-era AscendMLABackend)
        "WARNING 07-30 21:14:36 [compilation.py:1360] CUDAGraphMode.FULL is not supported with "
        "AscendMLABackend backend (support: AttentionCGSupport.UNIFORM_BATCH); setting "
        "cudagraph_mode=FULL_DECODE_ONLY",
        "cudagraph_mode_reset",
        "graph_fallbacks",
        "FULL_DECODE_ONLY",
    ),
    (  # vllm issue 28568 (a worker-prefixed downgrade with a trailing reason)
        "(EngineCore_DP0 pid=2847624) (Worker_TP0 pid=2847636) WARNING 11-12 16:25:20 "
        "[gpu_model_runner.py:4284] CUDAGraphMode.FULL_AND_PIECEWISE is not supported with "
        "ChunkedLocalAttention_8192_16_FlashInferBackend backend (support: "
        "AttentionCGSupport.NEVER); setting cudagraph_mode=PIECEWISE because attention is "
        "compiled piecewise",
        "cudagraph_mode_reset",
        "graph_fallbacks",
        "PIECEWISE",
    ),
    (  # vllm PR 23200: the same check raising, no full graph at all: refused
        "EngineCore_0 pid=1248800) ValueError: CUDAGraphMode.FULL is not supported with "
        "CutlassMLAMetadataBuilder backend (support: AttentionCGSupport.NEVER); please try "
        "cudagraph_mode=PIECEWISE, and make sure compilation level is piecewise",
        "graph_mode_refused",
        "graph_failures",
        None,
    ),
    (  # vllm-ascend v0.11.0 model_runner_v1.py:3446, the ACL graph form of the same raise
        "ValueError: ACLGraphMode.FULL is not supported with AscendAttentionMetadataBuilder "
        "backend (support: AttentionCGSupport.NEVER); please try cudagraph_mode=PIECEWISE, and "
        "make sure compilation level is piecewise",
        "graph_mode_refused",
        "graph_failures",
        None,
    ),
    (  # vllm-ascend v0.10.2rc1-v0.12 platform.py: an unsupported compilation level → eager
        "WARNING 09-10 10:00:00 [platform.py:161] NPU does not support CompilationLevel."
        "DYNAMO_ONCE compilation level. Setting CUDAGraphMode to NONE",
        "compilation_unsupported_fallback",
        "graph_fallbacks",
        "NONE",
    ),
    (  # vllm-ascend main platform.py, the same in its newer words
        "WARNING 09-10 10:00:00 [platform.py:975] NPU does not support compilation mode. "
        "mode=CompilationMode.STOCK_TORCH_COMPILE, action: setting CUDAGraphMode to NONE.",
        "compilation_unsupported_fallback",
        "graph_fallbacks",
        "NONE",
    ),
    (  # vllm-ascend v0.9.1 ascend_config.py:221: torchair asked for, switched off
        "WARNING 06-10 10:00:00 [ascend_config.py:221] Torchair graph mode is still experimental "
        "and not supported for V1 without mla currently, it has been disabled automatically.",
        "graph_mode_refused",
        "graph_failures",
        None,
    ),
    (  # vllm-ascend v0.7.3 worker_v1.py:240
        "WARNING 03-10 10:00:00 [worker_v1.py:240] Graph capture is not supported on NPU.",
        "npu_no_graph_capture",
        "eager",
        None,
    ),
    (  # vllm-ascend v0.9.1 model_runner_v1.py:2188
        "INFO 07-10 10:00:00 [model_runner_v1.py:2188] Skipping NPU graph capture for eager mode.",
        "skip_graph_capture_eager",
        "eager",
        True,
    ),
    (  # vllm-ascend v0.18.0 platform.py:304: xlite runs the model as its own full graph
        "INFO 03-10 10:00:00 [platform.py:304] ACLGraph is disabled under xlite full mode",
        "aclgraph_disabled",
        "graph_fallbacks",
        "XLITE_FULL",
    ),
    (  # vllm-ascend v0.11.0 platform.py: torchair sets CUDAGraphMode NONE by design, not eager
        "INFO 10-10 10:00:00 [platform.py:170] Torchair compilation enabled on NPU. Setting "
        "CUDAGraphMode to NONE",
        "torchair_enabled",
        "graph_notes",
        True,
    ),
]


@pytest.mark.parametrize(("line", "signal", "category", "value"), REAL_LINES)
def test_real_graph_lines_are_read_by_their_class(line, signal, category, value) -> None:
    f = scan_serving_log([(1, line)], "x.log")
    hits = [h for h in getattr(f, category) if h.signal == signal]
    assert hits, [(h.signal, h.value) for h in f.all_hits()]
    if value is not None:
        assert hits[0].value == value
    others = {"graph_fallbacks", "graph_failures", "eager"} - {category}
    assert not [h.signal for c in others for h in getattr(f, c)]


def test_requested_mode_and_reason_are_read_from_the_downgrade_line() -> None:
    f = scan_serving_log([(1, REAL_LINES[0][0])], "x.log")
    hit = f.graph_fallbacks[0]
    assert requested_of(hit) == "FULL"
    assert fallback_reason(hit).startswith("not supported with AscendMLABackend backend")
    f = scan_serving_log([(1, REAL_LINES[4][0])], "x.log")
    assert requested_of(f.graph_fallbacks[0]) == "compilation DYNAMO_ONCE"


def audit(tmp_path: Path, log: Path, layers=("framework",)):
    return run_inputs(tmp_path, layers, serving_logs=[log])


def graph(tmp_path: Path, text: str):
    log = tmp_path / "g.log"
    log.write_text(HEAD + text + UP)
    return audit(tmp_path, log).result("FWK-GRAPH-001")


@pytest.mark.parametrize(
    ("idx", "status", "words"),
    [
        (0, Status.WARN, "requested cudagraph_mode FULL but FULL_DECODE_ONLY took effect"),
        (1, Status.WARN, "requested cudagraph_mode FULL_AND_PIECEWISE but PIECEWISE took effect"),
        (2, Status.FAIL, "graph mode refused: graph_mode_refused"),
        (3, Status.FAIL, "ACLGraphMode.FULL is not supported"),
        (4, Status.FAIL, "requested cudagraph_mode compilation DYNAMO_ONCE but NONE took effect"),
        (6, Status.FAIL, "Torchair graph mode is still experimental"),
        (7, Status.FAIL, "serving runs eager"),
        (9, Status.WARN, "XLITE_FULL took effect"),
    ],
)
def test_graph_verdict_per_real_line(tmp_path, idx, status, words) -> None:
    r = graph(tmp_path, REAL_LINES[idx][0] + "\n")
    assert r.status is status, r.summary
    assert words in r.summary, r.summary


def test_by_design_downgrade_says_the_reason_not_a_cut_line(tmp_path) -> None:
    r = graph(tmp_path, REAL_LINES[0][0] + "\n")
    assert "(support: AttentionCGSupport.UNIFORM_BATCH)" in r.summary
    assert "(default)" not in r.summary and "FULL_DECODE_ONLY requested" in r.summary


def test_silent_downgrade_between_launch_and_engine_config_is_a_warn(tmp_path) -> None:
    text = (
        "INFO 10-10 10:00:00 [cli_args.py:1] non-default args: {'model': 'm', "
        "'compilation_config': {'cudagraph_mode': 'FULL_AND_PIECEWISE'}}\n"
        "INFO 10-10 10:00:01 [core.py:1] Initializing a V1 LLM engine (v0.11.0) with config: "
        "model='m', compilation_config={'level': 3, 'cudagraph_mode': <CUDAGraphMode.PIECEWISE: "
        "1>}\n"
    )
    r = graph(tmp_path, text)
    assert r.status is Status.WARN, r.summary
    assert "requested cudagraph_mode FULL_AND_PIECEWISE" in r.summary
    assert "engine config shows PIECEWISE" in r.summary


@pytest.mark.parametrize(
    ("name", "words"),
    [
        (
            "vllm-ascend-2266_v0.10.0rc1_Qwen3-235B_torchair_refused_NotImplementedError_ERR99999"
            ".log",
            "Torchair graph mode only works with following model types:['deepseek', 'pangu']",
        ),
        (
            "vllm-ascend-1456_v0.9.1rc1_DeepSeek-R1_ACL_graph_refused_NotImplementedError.log",
            "ACL Graph does not support deepseek",
        ),
    ],
)
def test_real_refusals_fail_naming_the_refusal(tmp_path, name, words) -> None:
    log = LOGS / name
    report = audit(tmp_path, log, layers=("operator", "framework"))
    g = report.result("FWK-GRAPH-001")
    assert g.status is Status.FAIL and "graph mode refused" in g.summary and words in g.summary
    life = report.result("FWK-LIFE-001")
    assert life.status is Status.FAIL and "ascend_config.py:" in life.summary
    assert report.layer("framework").verdict is Verdict.NOT_READY
    assert not [r.id for r in report.results if r.layer == "framework" and r.status is Status.PASS]


def test_vllm_c_import_error_with_undefined_symbol_is_harmless_on_ascend(tmp_path) -> None:
    log = LOGS / "vllm-ascend-1456_v0.9.1rc1_DeepSeek-R1_ACL_graph_refused_NotImplementedError.log"
    r = audit(tmp_path, log).result("FWK-STACK-001")
    assert r.status is not Status.FAIL, r.summary
    f = scan_serving_log([(1, "ImportError: /x/libtorch_npu.so: undefined symbol: _ZN3c10")], "x")
    assert f.last("undefined_symbol") is not None
