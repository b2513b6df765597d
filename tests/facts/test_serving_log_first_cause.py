"""A death names its first cause, not only its last fatal line: MindIE start failures (MIE codes,
the daemon's error lines, pybind11 'At:' frames), HCCL runners, and vLLM engines that die for good
while serving. Logs from public issue threads (tests/data/serving_logs/README.md)."""

from __future__ import annotations

import pytest
from shared_fixtures import DATA, fixture

from ascend_audit.facts.serving_log import scan_serving_log, scan_serving_log_file

LOGS = DATA / "serving_logs"


def _scan(name: str):
    return scan_serving_log_file(str(LOGS / name))


def _text(text: str):
    return scan_serving_log(enumerate(text.splitlines(), 1), "inline.log")


def test_mindie_start_failure_names_the_listen_error_first() -> None:
    f = _scan("gpustack-3894_mindie_310p_MIE04E02041C_listen_failed_start_fail.log")
    assert f.died and f.engine_kind == "mindie"
    assert f.death.signal == "mindie_start_failed" and f.death.lineno == 4  # the final line
    assert f.first_cause.lineno == 1
    assert str(f.first_cause.value).startswith("[MIE04E02041C] [endpoint] Failed to listen")
    assert {"mindie:MIE04E02041C", "mindie:MIE04E02011C"} <= {h.value for h in f.error_codes}


def test_the_fail_line_is_not_a_restart() -> None:
    # "[Start mindie server] [fail]" also names the launch stage; it must not undo its own death
    f = _text(
        "[2025-12-15 15:19:22.682+08:00] [38] [ubuntu] [system] [server] "
        "[Start mindie server] [fail]"
    )
    assert f.died and f.death.signal == "mindie_start_failed" and f.first_cause is None


def test_hccl_runner_failure_names_the_native_hccl_error_first() -> None:
    f = scan_serving_log_file(str(DATA / "framework" / "mindie_atb_hccl_init_failed.log"))
    assert f.died and f.death.signal == "exited" and f.death.lineno == 7
    assert f.first_cause.lineno == 2 and "HcclCommInitRootInfo failed" in str(f.first_cause.value)
    assert not str(f.first_cause.value).startswith("[ERROR]")  # the daemon head is dropped


def test_exception_inside_a_daemon_line_with_pybind_frames() -> None:
    f = _scan("gpustack-2016_mindie_unsupported_model_minicpmv_pybind_At.partial.log")
    assert f.died and f.engine_kind == "mindie" and f.recognised
    assert f.final_exception.startswith("NotImplementedError: unsupported model type: minicpmv")
    assert f.exception_where == "/usr/local/Ascend/atb-models/atb_llm/models/__init__.py:94"


def test_torch_npu_block_names_its_first_line_and_the_refusal() -> None:
    f = _scan("gpustack-3225_mindie_ERR00100_EE1001_invalid_visible_device.partial.log")
    assert f.died and f.death.signal == "visible_devices_refused" and f.death.lineno == 4
    assert f.first_cause.lineno == 1 and "ERR00100" in str(f.first_cause.value)


def test_mindie_access_log_404_loop_is_a_death() -> None:
    block = (LOGS / "gpustack-2898_mindie_daemon_up_models_404_loop.partial.log").read_text()
    f = _text(block * 3)  # the reporter: the block repeats
    assert f.engine_kind == "mindie" and f.models_404 == 3 and f.died
    assert f.death.signal == "models_404"


def test_engine_dead_is_terminal_a_later_200_does_not_revive_it() -> None:
    f = _scan(
        "vllm-ascend-7384_qwen3-coder-480b_EngineDeadError_while_serving_then_200.partial.log"
    )
    assert f.died and f.stage == "serving"
    assert f.final_exception.startswith("vllm.v1.engine.exceptions.EngineDeadError")
    assert f.exception_where.endswith("core_client.py:910")


def test_a_restart_after_a_terminal_death_revives() -> None:
    f = _text(
        "ERROR 01-01 00:00:00 [core.py:1] EngineCore encountered a fatal error.\n"
        "INFO 01-01 00:01:00 [api_server.py:1] vLLM API server version 0.11.0\n"
        'INFO:     1.2.3.4:5 - "POST /v1/chat/completions HTTP/1.1" 200 OK\n'
    )
    assert not f.died and f.stage == "serving"


def test_engine_core_fatal_error_while_serving() -> None:
    f = _scan("vllm-ascend-1767_EngineCore_fatal_error_while_serving_scheduler.partial.log")
    assert f.recognised and f.engine_kind == "vllm" and f.stage == "serving"
    assert f.died and f.death.signal == "engine_dead"


def test_a_served_request_clears_an_earlier_error_as_first_cause() -> None:
    f = _text(
        "INFO:     Application startup complete.\n"
        "ERROR 01-01 00:00:00 [serving.py:1] RuntimeError: a request failed, error code is 507015\n"
        'INFO:     1.2.3.4:5 - "POST /v1/chat/completions HTTP/1.1" 200 OK\n'
        'INFO:     1.2.3.4:5 - "POST /v1/chat/completions HTTP/1.1" 200 OK\n'
        "ERROR 01-01 00:09:00 [core.py:1] KeyError: 'x'\n"
        "ERROR 01-01 00:09:00 [core.py:1] EngineCore failed to start.\n"
    )
    assert f.died and f.final_exception == "KeyError: 'x'"
    assert f.first_cause is None  # the exception is the death line itself; 507015 was served past


@pytest.mark.parametrize(
    "name",
    [
        "field/serving_logs/MindIE2.2.RC1_Qwen2.5-VL-7B_910B2_1card_warmup_OOM_maxPrefillTokens"
        "_gpustack-3541.partial.log",
        "field/visibility_and_resources/MindIE_ASCEND_RT_VISIBLE_DEVICES_4_error_input_data_rang"
        "_0-2_NPU_VM_gpustack-3352.partial.log",
    ],
)
def test_field_mindie_deaths_keep_a_cause_before_the_final_line(name) -> None:
    f = scan_serving_log_file(str(fixture(name)))
    assert f.died and f.engine_kind == "mindie"
    cause = f.first_cause or f.death
    assert cause.lineno <= f.death.lineno and cause.text


def test_a_log_that_ends_inside_a_traceback_died_and_names_the_code_before_it() -> None:
    f = _scan("vllm-ascend-3162_GRPO_EI0009_transport_init_error_collective_rpc_failed.partial.log")
    assert f.died and f.death.signal == "unfinished_traceback" and f.death.lineno == 4
    assert f.first_cause.lineno == 1 and "EI0009" in str(f.first_cause.value)


def test_a_traceback_followed_by_progress_is_not_a_death() -> None:
    f = _text(
        "Traceback (most recent call last):\n"
        '  File "/x.py", line 1, in <module>\n'
        "INFO:     Application startup complete.\n"
    )
    assert not f.died and f.stage == "server_up"


def test_old_worker_prefix_and_bare_exception_are_read() -> None:
    f = _text(
        "(VllmWorker rank=1 pid=7226) ERROR 09-03 03:02:37 [multiproc_executor.py:522] "
        "RuntimeError: create_config:x.ts:148 HCCL function error: hccl(...), error code is 1\n"
    )
    assert f.final_exception.startswith("RuntimeError: create_config")
    g = _text(
        "Traceback (most recent call last):\n"
        '  File "/vllm/executor/multiproc_executor.py", line 422, in wait_for_ready\n'
        "    raise e from None\n"
        "Exception: WorkerProc initialization failed due to an exception in a background process.\n"
    )
    assert g.died and g.final_exception.startswith("Exception: WorkerProc initialization failed")
    assert g.exception_where == "/vllm/executor/multiproc_executor.py:422"
