"""HCCL communicator init failures as public issue threads show them (vllm-ascend#3367 class:
a worker's hcclCommInitRootInfoConfig error; gpustack#2021 class: MindIE/ATB native HCCL logs
and the wrapper's exit code), written in the project's own test data."""

from __future__ import annotations

from shared_fixtures import DATA

from ascend_audit.facts.error_codes import describe, find_codes
from ascend_audit.facts.serving_log import scan_serving_log_file

FRAMEWORK = DATA / "framework"


def _codes(f):
    return {h.value for h in f.error_codes}


def test_mindie_native_hccl_init_failure_is_a_death_with_its_code():
    f = scan_serving_log_file(str(FRAMEWORK / "mindie_atb_hccl_init_failed.log"))
    assert f.died and f.engine_kind == "mindie"
    signals = [h.signal for h in f.deaths]
    assert signals[0] == "hccl_init_failed" and "exited" in signals
    assert "hccl:2" in _codes(f)
    assert describe("2", "hccl").name == "HCCL_E_PTR"  # hicann/hcomm hccl_types.h HcclResult


def test_vllm_worker_hccl_init_failure_names_the_exception_and_codes():
    f = scan_serving_log_file(str(FRAMEWORK / "vllm_ascend_v1_worker_hccl_init_failed.log"))
    assert f.died and f.stage == "configured"
    assert f.final_exception and "hcclCommInitRootInfoConfig" in f.final_exception
    assert {"hccl:1", "torch_npu:ERR02200"} <= _codes(f)
    assert describe("1", "hccl").name == "HCCL_E_PARA"
    assert "worker_died" in [h.signal for h in f.deaths]


def test_hccl_native_errno_and_runner_error_numbers_are_codes():
    line = "[ERROR] HCCL(1,x):2025 [op_base.cc:974][Init]errNo[0x000000000500000b]Hccl failed."
    assert [(c, k) for c, k, _s, _e in find_codes(line)] == [("11", "hccl")]
    runner = "[hccl_runner.cpp:132] AllGatherHcclRunner:0 HcclCommInitRootInfo fail, error:7"
    assert [(c, k) for c, k, _s, _e in find_codes(runner)] == [("7", "hccl")]
    assert find_codes("request error: 2 retries left") == []  # not HCCL, too short for ACL
    assert find_codes("errNo[0x0000000003000002]") == []  # another module's errNo


def test_a_clean_exit_is_not_a_death(tmp_path):
    log = tmp_path / "serve.log"
    log.write_text(
        "INFO 10-10 17:14:22 [api_server.py:1896] vLLM API server version 0.11.0\n"
        "INFO 10-10 17:14:50 [launcher.py:44] Application startup complete.\n"
        "Inference server exited with code 0\n"
    )
    f = scan_serving_log_file(str(log))
    assert not f.died
