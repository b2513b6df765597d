"""A death is final: a shutdown logged after it is the dead service's teardown, not a clean stop.

Property: every log in the tests that ends in death stays dead (FWK-LIFE-001 FAIL naming the
death) when each known shutdown sequence is appended to it; a clean stop is clean only when no
death precedes it, and a restart after a shutdown is judged on its own."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

import pytest
from ascend_audit.checks.framework.lifecycle import _judge
from shared_fixtures import DATA, FIXTURES

from ascend_audit.facts.serving_log import scan_serving_log, scan_serving_log_file
from ascend_audit.model import Status

# Shutdown sequences servers print on a stop request, as they print them: vLLM's API server and
# uvicorn (vllm-project/vllm#30958: "[launcher.py:79] Shutting down FastAPI HTTP server."),
# vLLM V1's engine core ("Shutdown initiated (timeout=0)", a vllm-ascend log in tests/data), the
# "[shutdown]" lines of vllm-project/vllm#43707, a Ray / gunicorn-style worker stop and the
# signal lines.
SHUTDOWNS = {
    "vllm_uvicorn": (
        "INFO 06-10 10:00:00 [launcher.py:79] Shutting down FastAPI HTTP server.",
        "INFO:     Shutting down",
        "INFO:     Waiting for application shutdown.",
        "INFO:     Application shutdown complete.",
        "INFO:     Finished server process [1234]",
    ),
    "uvicorn_finished_only": (
        "INFO:     Application shutdown complete.",
        "INFO:     Finished server process [1234]",
    ),
    "v1_engine_core": (
        "(EngineCore pid=970) INFO 05-12 11:36:00 [core.py:1201] Shutdown initiated (timeout=0)",
    ),
    "vllm_shutdown_tags": (
        "^C(EngineCore pid=3946143) INFO 05-26 19:19:56 [core.py:1155] [shutdown] EngineCore: "
        "trigger received signal=SIGINT",
        "(Worker_TP0 pid=3946523) INFO 05-26 19:19:56 [multiproc_executor.py:905] [shutdown] "
        "WorkerProc: terminated by shutdown signal",
        "(APIServer pid=3945527) INFO 05-26 19:19:56 [launcher.py:100] [shutdown] API server: "
        "shutdown triggered",
    ),
    "stopping_worker": ("[2026-05-26 19:19:56] INFO: Stopping worker 0", "Stopping worker 1"),
    "signals": (
        "INFO 06-10 10:00:00 [api_server.py:1000] Received SIGTERM, shutting down.",
        "Received SIGINT",
    ),
    "keyboard_interrupt": (
        "^CTraceback (most recent call last):",
        '  File "/usr/local/bin/vllm", line 8, in <module>',
        "KeyboardInterrupt",
    ),
}


def _log_files() -> list[Path]:
    roots = [DATA / "serving_logs", DATA / "framework", DATA / "serving_inputs"]
    roots += [FIXTURES / d for d in ("field/serving_logs", "field2/framework", "framework")]
    roots += [FIXTURES / "field/visibility_and_resources", FIXTURES / "field/launch_and_args"]
    out: list[Path] = []
    for root in roots:
        if root.is_dir():
            out += sorted(p for p in root.rglob("*.log") if p.is_file())
    return out


def _dead_logs() -> list[Path]:
    return [p for p in _log_files() if scan_serving_log_file(str(p), fallbacks=False).died]


DEAD = _dead_logs()


def test_the_tests_hold_enough_dead_logs_for_the_property() -> None:
    print(f"{len(DEAD)} dead logs of {len(_log_files())} logs in the tests")
    assert len(DEAD) >= 25, [p.name for p in DEAD]


@pytest.mark.parametrize("sequence", sorted(SHUTDOWNS))
def test_every_dead_log_stays_dead_after_each_shutdown_sequence(sequence: str) -> None:
    tail = "\n".join(SHUTDOWNS[sequence]) + "\n"
    for path in DEAD:
        before = scan_serving_log_file(str(path), fallbacks=False)
        data = path.read_bytes()
        fd, name = tempfile.mkstemp(suffix=".log")
        try:
            with os.fdopen(fd, "wb") as fh:
                fh.write(data if data.endswith(b"\n") or not data else data + b"\n")
                fh.write(tail.encode())
            after = scan_serving_log_file(name, source=path.name, fallbacks=False)
        finally:
            os.unlink(name)
        assert after.died, f"{path.name} + {sequence}: judged alive"
        assert after.death is not None and before.death is not None
        assert after.death.lineno == before.death.lineno, path.name  # the same death
        out = _judge(after)
        assert out.status is Status.FAIL and "died" in out.summary, (path.name, out.summary)


def scan(*lines: str):
    return scan_serving_log(enumerate(lines, 1), "x.log")


SERVED_THEN_DEAD = (
    "INFO 09-01 10:00:00 [api_server.py:1000] vLLM API server version 0.11.0",
    "INFO:     Application startup complete.",
    'INFO:     10.0.0.1:5000 - "POST /v1/chat/completions HTTP/1.1" 200 OK',
    "ERROR 09-01 10:05:00 [core.py:700] EngineCore encountered a fatal error.",
    "ERROR 09-01 10:05:00 [async_llm.py:400] AsyncLLM output_handler failed.",
    "vllm.v1.engine.exceptions.EngineDeadError: EngineCore encountered an issue. See stack trace "
    "(above) for the root cause.",
)


def test_served_then_died_then_shut_down_is_not_ready_naming_the_death() -> None:
    f = scan(*SERVED_THEN_DEAD, *SHUTDOWNS["vllm_uvicorn"])
    assert f.died and f.shut_down and f.serving_lines == 1
    out = _judge(f)
    assert out.status is Status.FAIL
    assert "died after serving 1 request(s)" in out.summary
    assert "EngineDeadError" in out.summary


def test_a_clean_stop_with_no_death_before_it_is_clean() -> None:
    f = scan(*SERVED_THEN_DEAD[:3], *SHUTDOWNS["vllm_uvicorn"])
    assert f.shut_down and not f.died
    assert _judge(f).status is Status.PASS


def test_teardown_noise_after_a_clean_stop_is_no_death() -> None:
    f = scan(
        *SERVED_THEN_DEAD[:3],
        *SHUTDOWNS["v1_engine_core"],
        "(VllmWorker rank=0 pid=1) ERROR 09-01 10:06:00 [multiproc_executor.py:400] Worker proc "
        "VllmWorker-0 died unexpectedly, shutting down executor.",
    )
    assert f.shut_down and not f.died


def test_a_death_after_a_shutdown_and_a_restart_counts() -> None:
    f = scan(
        *SERVED_THEN_DEAD[:3],
        *SHUTDOWNS["vllm_uvicorn"],
        "INFO 09-01 11:00:00 [api_server.py:1000] vLLM API server version 0.11.0",
        "INFO 09-01 11:00:05 [core.py:70] Initializing a V1 LLM engine (v0.11.0) with config: x",
        "ValueError: No available memory for the cache blocks.",
    )
    assert f.died and f.final_exception == "ValueError: No available memory for the cache blocks."
    assert _judge(f).status is Status.FAIL
