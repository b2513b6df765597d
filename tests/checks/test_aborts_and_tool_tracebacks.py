"""A C++ abort ("terminate called after throwing …") is a death naming the thrown type and its
what(); a traceback raised by collect_env.py is the script failing, not the engine dying
(tests/data/serving_logs/README.md, tests/data/collect_env/README.md)."""

from __future__ import annotations

from pathlib import Path

import pytest
from shared_fixtures import DATA
from standins import run_inputs

from ascend_audit.facts.serving_log import scan_serving_log, scan_serving_log_file
from ascend_audit.model import Status, Verdict

LOGS = DATA / "serving_logs"
PASTES = DATA / "collect_env"
ABORT_LOG = (
    LOGS / "vllm-ascend-5043_qwen3-next_mtp_507035_EZ9999_fault_kernel_name_terminate.partial.log"
)
TOOL_TRACEBACKS = {
    "vllm-ascend-3793_collect_env_traceback_ModuleNotFoundError_vllm_ascend_version.partial.txt": (
        "ModuleNotFoundError: No module named 'vllm_ascend._versi",
        "collect_env.py:174",
    ),
    "vllm-ascend-5497_collect_env_traceback_ImportError_vllm_version_ERR99999.partial.txt": (
        "ImportError: cannot import name '__version__' from 'vllm'",
        "collect_env.py:169",
    ),
    "vllm-ascend-380_collect_env_traceback_AttributeError_parse_version_ERR99999.partial.txt": (
        "AttributeError: 'int' object has no attribute 'startswith'",
        "collect_env.py:159",
    ),
}


def audit(tmp_path: Path, *logs: Path, layers=("operator", "framework")):
    return run_inputs(tmp_path, layers, serving_logs=logs)


def scan(*lines: str):
    return scan_serving_log(enumerate(lines, 1), "x.log")


# --- C++ aborts -------------------------------------------------------------------------------


def test_real_terminate_log_is_a_death_with_the_code_line_as_first_cause(tmp_path) -> None:
    f = scan_serving_log_file(str(ABORT_LOG))
    assert f.died and f.death is not None
    assert (f.final_exception or "").startswith("c10::Error")
    assert f.first_cause is not None and "507035" in str(f.first_cause.value)
    assert f.first_cause.lineno == 1
    report = audit(tmp_path, ABORT_LOG)
    life = report.result("FWK-LIFE-001")
    assert life.status is Status.FAIL and "the engine died" in life.summary
    assert "final: c10::Error" in life.summary and "first cause:" in life.summary
    assert "uncaught C++ exception aborted the process" in life.summary
    assert report.layer("framework").verdict is Verdict.NOT_READY


# Verbatim from public threads: vllm-project/vllm#20170 (a worker, before its traceback),
# NVIDIA/Megatron-LM#935 (the watchdog's what()), tindy2013/subconverter#415 (std::runtime_error).
REAL_ABORTS = [
    (
        (
            "terminate called after throwing an instance of 'c10::DistBackendError'",
            "(VllmWorker rank=0 pid=223) ERROR 06-26 23:10:17 [multiproc_executor.py:527] "
            "WorkerProc hit an exception.",
        ),
        "c10::DistBackendError (uncaught C++ exception)",
    ),
    (
        (
            "terminate called after throwing an instance of 'c10::DistBackendError'",
            "  what():  [PG 1 Rank 7] Process group watchdog thread terminated with exception: "
            "[Rank 7] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=199, "
            "OpType=_REDUCE_SCATTER_BASE, NumelIn=7098994688, NumelOut=443687168, "
            "Timeout(ms)=600000) ran for 882725 milliseconds before timing out.",
            "Exception raised from checkTimeout at /opt/pytorch/pytorch/torch/csrc/distributed/"
            "c10d/ProcessGroupNCCL.cpp:567 (most recent call first):",
            "frame #0: c10::Error::Error(c10::SourceLocation, std::__cxx11::basic_string<char, "
            "std::char_traits<char>, std::allocator<char> >) + 0x99 (0x7ff9a0afb969 in "
            "/usr/local/lib/python3.10/dist-packages/torch/lib/libc10.so)",
        ),
        "c10::DistBackendError: [PG 1 Rank 7] Process group watchdog thread terminated",
    ),
    (
        (
            "terminate called after throwing an instance of 'std::runtime_error'",
            "  what():  assert",
        ),
        "std::runtime_error: assert",
    ),
]


@pytest.mark.parametrize("lines,final", REAL_ABORTS, ids=("vllm-20170", "megatron-935", "std"))
def test_real_terminate_lines_are_deaths_naming_type_and_what(lines, final) -> None:
    f = scan(*lines)
    assert f.died and (f.final_exception or "").startswith(final), f.final_exception
    assert any(h.signal == "cpp_abort" for h in f.deaths)


def test_interleaved_aborts_of_many_ranks_name_one_type_and_its_what() -> None:
    """huggingface/open-r1#620: eight ranks aborting at once, their lines glued together."""
    f = scan(
        "terminate called after throwing an instance of 'c10::DistBackendErrorterminate called "
        "after throwing an instance of ''",
        "terminate called after throwing an instance of 'terminate called after throwing an "
        "instance of 'terminate called after throwing an instan",
        "ce of 'c10::DistBackendErrorc10::DistBackendError'",
        "terminate called after throwing an instance of "
        "'c10::DistBackendErrorc10::DistBackendError'",
        "c10::DistBackendError'",
        "'",
        "'",
        "  what():  [PG ID 0 PG GUID 0(default_pg) Rank 3] Process group watchdog thread "
        "terminated with exception: [Rank 3] Watchdog caught colle",
    )
    assert f.died
    assert (f.final_exception or "").startswith("c10::DistBackendError: [PG ID 0"), (
        f.final_exception
    )


def test_abort_through_prefixes_then_python_abort_lines_keep_the_cpp_exception() -> None:
    f = scan(
        "(VllmWorker TP0 pid=961) ERROR 09-07 01:11:09 [multiproc_executor.py:596] EH9999: "
        "synchronize stream failed, runtime result = 507048",
        "(VllmWorker TP0 pid=961) terminate called after throwing an instance of 'c10::Error'",
        "(VllmWorker TP0 pid=961)   what():  NPU function error: aclrtSynchronizeStream",
        "Fatal Python error: Aborted",
        "Aborted (core dumped)",
    )
    assert f.died and f.final_exception == "c10::Error: NPU function error: aclrtSynchronizeStream"
    assert f.first_cause is not None and "507048" in str(f.first_cause.value)


def test_other_abort_forms_and_lookalikes() -> None:
    f = scan("terminate called without an active exception")
    assert f.died and f.final_exception == "terminate called without an active exception"
    f = scan("Fatal Python error: Aborted")
    assert f.died and f.death.signal == "crashed"
    f = scan("terminate called after throwing an instance of '" + "A" * 400 + "'")
    assert f.died and f.final_exception == "an uncaught C++ exception (terminate called)"
    # words alone prove nothing
    assert not scan("INFO the scheduler will terminate called-back requests; what(): n/a").died
    assert not scan("  what():  stray message with no abort before it").died


# --- collect_env's own tracebacks -------------------------------------------------------------


@pytest.mark.parametrize("name", TOOL_TRACEBACKS, ids=lambda n: n[:24])
def test_real_collect_env_tracebacks_are_the_tool_not_the_engine(tmp_path, name) -> None:
    exc, where = TOOL_TRACEBACKS[name]
    f = scan_serving_log_file(str(PASTES / name))
    assert f.collect_env and not f.died and f.death is None
    tool = f.last("tool_traceback")
    assert tool is not None and str(tool.value).startswith(exc) and where in str(tool.value)
    life = audit(tmp_path, PASTES / name).result("FWK-LIFE-001")
    assert life.status is Status.SKIP, life.summary
    assert "collect_env.py failing, not the engine" in life.summary
    assert "engine died" not in life.summary


def test_collect_env_traceback_beside_a_judged_paste_is_not_ready(tmp_path) -> None:
    """The script's traceback is no death; the layer is NOT_READY by the other checks' verdicts."""
    other = (
        PASTES / "vllm-ascend-3312_collect_env_torch2.5.1_failed_to_register_custom_ops.partial.txt"
    )
    tb = PASTES / next(iter(TOOL_TRACEBACKS))
    report = audit(tmp_path, other, tb, layers=("framework",))
    life = report.result("FWK-LIFE-001")
    assert "engine died" not in life.summary and life.status is not Status.PASS
    assert report.result("FWK-STACK-001").status is Status.FAIL
    assert report.layer("framework").verdict is Verdict.NOT_READY


def test_collect_env_paste_then_a_real_dead_serving_log_judges_the_serving_part(tmp_path) -> None:
    tb = (
        PASTES / "vllm-ascend-5497_collect_env_traceback_ImportError_vllm_version_ERR99999"
        ".partial.txt"
    ).read_text()
    dead = (
        LOGS / "vllm-ascend-5707_two_services_one_NPU_No_available_memory_for_the_cache_blocks"
        ".partial.log"
    )
    mixed = tmp_path / "mixed.log"
    mixed.write_text(tb + dead.read_text(encoding="utf-8", errors="replace"))
    f = scan_serving_log_file(str(mixed))
    assert f.died and (f.final_exception or "").startswith("ValueError: No available memory")
    assert f.first_cause is None or "ERR99999" not in str(f.first_cause.value)
    life = audit(tmp_path, mixed).result("FWK-LIFE-001")
    assert life.status is Status.FAIL and "No available memory" in life.summary
    assert "collect_env.py:169" not in life.summary


def test_tool_traceback_class_launcher_frames_inner_imports_and_cut_tracebacks() -> None:
    # python -m torch.utils.collect_env: runpy's frames first, then the script's
    f = scan(
        "Traceback (most recent call last):",
        '  File "<frozen runpy>", line 198, in _run_module_as_main',
        '  File "/py/torch/utils/collect_env.py", line 30, in <module>',
        '  File "/py/vllm/__init__.py", line 5, in <module>',
        "ModuleNotFoundError: No module named 'vllm.envs'",
    )
    assert not f.died and f.last("tool_traceback") is not None
    # the prompt alone, the traceback cut before any frame: still the script's
    f = scan("$ python collect_env.py", "Traceback (most recent call last):")
    assert not f.died
    # a banner, then a traceback started by another program: the engine's death
    f = scan(
        "Collecting environment information...",
        "Traceback (most recent call last):",
        '  File "/usr/local/bin/vllm", line 8, in <module>',
        '  File "/py/vllm_ascend/platform.py", line 68, in pre_register_and_update',
        "ModuleNotFoundError: No module named 'torch_npu'",
    )
    assert f.died and f.final_exception == "ModuleNotFoundError: No module named 'torch_npu'"
    # a script merely named like it is no reporting script
    f = scan(
        "Traceback (most recent call last):",
        '  File "/x/my_collect_env.py", line 1, in <module>',
        "RuntimeError: boom",
    )
    assert f.died
