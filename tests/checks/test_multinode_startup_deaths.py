"""Multi-node start-up failures are deaths with their cause class and checklist, not "the log
stops after launched": HCCL cannot listen on its NIC port, HCCL links not established in time,
the c10d rendezvous timed out (real logs in tests/data/serving_logs, classes in
ascend_audit/data/serving_line_classes.toml)."""

from __future__ import annotations

import pytest
from ascend_audit.checks.framework.lifecycle import _judge
from shared_fixtures import DATA

from ascend_audit.facts.serving_line_classes import death_class, line_classes
from ascend_audit.facts.serving_log import scan_serving_log, scan_serving_log_file
from ascend_audit.model import Status

LOGS = DATA / "serving_logs"

# file prefix -> (death kind named first, words the finding must carry)
CASES = {
    "vllm-ascend-1955_": ("hccl_port_busy", ("16666", "leftover process", "npu-smi info")),
    "vllm-ascend-9447_": ("hccl_link_timeout", ("HCCL_CONNECT_TIMEOUT", "peer", "hccn_tool")),
    "vllm-ascend-2248_": ("c10d_rendezvous_timeout", ("GLOO_SOCKET_IFNAME", "TP_SOCKET_IFNAME")),
}


@pytest.mark.parametrize("prefix", sorted(CASES))
def test_real_multinode_startup_failures_are_named_deaths(prefix: str) -> None:
    kind, words = CASES[prefix]
    (path,) = sorted(LOGS.glob(prefix + "*"))
    f = scan_serving_log_file(str(path), fallbacks=False)
    assert f.died and f.deaths[0].signal == kind, [h.signal for h in f.deaths]
    out = _judge(f)
    assert out.status is Status.FAIL and "the engine died" in out.summary
    text = f"{out.summary} {out.remediation}"
    for word in words:
        assert word in text, (word, text)


def test_a_port_held_names_the_port_not_the_later_link_timeout() -> None:
    (path,) = sorted(LOGS.glob("vllm-ascend-1955_*"))
    out = _judge(scan_serving_log_file(str(path), fallbacks=False))
    assert "could not listen on the NPU NIC's port" in out.summary
    assert out.summary.index("listen") < out.summary.index("final")


@pytest.mark.parametrize("entry", line_classes().deaths, ids=lambda d: f"{d.kind}:{d.match}")
def test_each_death_class_is_found_from_its_own_example(entry) -> None:
    f = scan_serving_log([(1, entry.example)], "x.log")
    assert f.died and f.death is not None and f.death.signal == entry.kind
    assert death_class(entry.kind, entry.example) == entry
    assert entry.source.startswith("https://") and entry.checklist and entry.cause


def test_a_rendezvous_warning_the_service_got_past_is_no_death() -> None:
    f = scan_serving_log(
        enumerate(
            (
                "[rank0]:[W806 22:23:09.97 socket.cpp:487] [c10d] waitForInput: socket "
                "SocketImpl(fd=1, addr=[::1]:1, remote=[::1]:2) timed out after 1800000ms",
                "INFO:     Application startup complete.",
                'INFO:     127.0.0.1:1 - "POST /v1/completions HTTP/1.1" 200 OK',
            ),
            1,
        ),
        "x.log",
    )
    assert not f.died and f.stage == "serving"
