"""The stack from what bug reports paste: collect_env layouts, `pip list` columns, hand-written
lists; harmless warnings told from faults (tests/data/collect_env/README.md)."""

from __future__ import annotations

import pytest
from shared_fixtures import DATA, data_file
from standins import run_inputs

from ascend_audit.facts.serving_log import scan_serving_log, scan_serving_log_file
from ascend_audit.model import Status

PASTES = DATA / "collect_env"


def _paste(prefix: str):
    return data_file(PASTES, prefix)


def _stack(tmp_path, path):
    return run_inputs(tmp_path, ["framework"], serving_logs=[path]).result("FWK-STACK-001")


@pytest.mark.parametrize(
    ("prefix", "versions"),
    [
        ("vllm-22518", {"torch": "2.5.1"}),
        ("vllm-ascend-3312", {"torch": "2.5.1"}),
        (
            "vllm-ascend-3793_pip_list_torch2.7.1",
            {"torch": "2.7.1", "torch_npu": "2.7.1rc1", "vllm": "0.11.0"},
        ),
        (
            "vllm-ascend-3793_pip_list_torch2.8.0",
            {"torch": "2.8.0", "torch_npu": "2.8.0rc1", "vllm": "0.11.0"},
        ),
        (
            "vllm-ascend-7587",
            {
                "torch": "2.8.0",
                "torch_npu": "2.8.0",
                "vllm": "0.11.0",
                "vllm_ascend": "0.11.0rc1.dev",
            },
        ),
        ("vllm-ascend-1188", {"vllm": "0.9.0", "vllm_ascend": "0.9.0", "cann": "8.1.rc1"}),
        ("vllm-ascend-16983", {"torch": "2.10.0+cpu"}),
    ],
)
def test_versions_are_read_from_every_paste_layout(prefix, versions) -> None:
    f = scan_serving_log_file(str(_paste(prefix)))
    got = {n: f.version(n) for n in ("torch", "torch_npu", "vllm", "vllm_ascend", "cann", "mindie")}
    assert {k: v for k, v in got.items() if v} == versions


def test_install_commands_and_prose_state_no_version() -> None:
    lines = [
        "pip install vllm-ascend==0.11.0rc0",
        "# Install vllm-project/vllm. The newest supported version is v0.11.0.",
        "torch is 2.5.1 here, torchvision  0.22.1",
        "vllm serve /models/x --port 8000",
    ]
    f = scan_serving_log(enumerate(lines, 1), "prose")
    assert not f.versions


def test_a_dev_build_is_judged_by_the_release_it_leads_to(tmp_path) -> None:
    r = _stack(tmp_path, _paste("vllm-ascend-7587"))
    assert r.status is Status.FAIL
    assert "a development build of 0.11.0rc1: not the release's stack: torch 2.8.0" in r.summary


def test_a_partial_pip_list_is_never_a_pass(tmp_path) -> None:
    for prefix in ("vllm-ascend-3793_pip_list_torch2.7.1", "vllm-ascend-3793_pip_list_torch2.8.0"):
        r = _stack(tmp_path, _paste(prefix))
        assert r.status is Status.WARN and "only partly judged" in r.summary, r.summary


def test_glibc_fault_is_named_once_and_vllm_c_is_harmless(tmp_path) -> None:
    path = _paste("vllm-ascend-1249")
    f = scan_serving_log_file(str(path))
    assert [h.signal for h in f.stack_errors] == ["custom_ops_disabled"]
    assert "GLIBC_2.32" in str(f.stack_errors[0].value)
    r = _stack(tmp_path, path)
    assert r.status is Status.FAIL and "undefined symbol" not in r.summary


@pytest.mark.parametrize("prefix", ["vllm-22518", "vllm-ascend-3312"])
def test_custom_ops_not_registering_is_a_fault(tmp_path, prefix) -> None:
    r = _stack(tmp_path, _paste(prefix))
    assert r.status is Status.FAIL and "custom operators cannot load" in r.summary


def test_ld_preload_warning_is_not_a_fault(tmp_path) -> None:
    f = scan_serving_log_file(str(_paste("vllm-ascend-16983")))
    assert not f.stack_errors
    assert _stack(tmp_path, _paste("vllm-ascend-16983")).status is Status.WARN


def test_mindie_stated_by_hand_is_judged_like_the_probe(tmp_path) -> None:
    # Synthetic (written for this test): the MindIE pairing the probe checks, from a pasted list.
    path = tmp_path / "stack.txt"
    path.write_text("mindie-llm: 2.1.RC1\nCANN: 8.0.RC3\ntorch-npu: 2.1.0.post12\n")
    r = _stack(tmp_path, path)
    assert r.status is Status.FAIL and "MindIE 2.1.RC1 with CANN 8.0.RC3" in r.summary
