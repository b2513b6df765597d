"""DRV-NPU-002 (NPU health): PASS, each way to WARN / FAIL / ERROR, real outputs, hostile input."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from shared_fixtures import DATA, fixture_cases, read_fixture
from standins import run_node, standin

from ascend_audit.gather.npu_details import health_argv
from ascend_audit.model import Status

CHECK = "DRV-NPU-002"
TABLE = (DATA / "driver" / "npu_smi_info_910b3_8npu.txt").read_text()
A3_TABLE = (DATA / "npu_smi_info_a3_8npu.txt").read_text()
HEALTH_OK = "Health Status                  : OK\nError Code                     : NA\n" + (
    "Error Information              : NA\n"
)
HEALTH_ALARM = (
    "\tHealth Status                  : Alarm\n"
    "\tError Code                     : 80E18005 80CB8009\n"
    "\tError Information              : HBM multi-bit ECC error\n"
    "\n"
    "\t                               : node type=HBM, sensor type=Memory, "
    "event state=uncorrectable\n"
)
INVALID_ID = (
    "Invalid card id.\nError parameter of -i\nUsage: npu-smi info <watch|proc|-h|-m|-l|-t type>\n"
)


def with_health(table: str, npu: int, word: str) -> str:
    """The 910B3 table with NPU NPU's Health cell replaced, column widths kept."""
    pattern = re.compile(rf"^(\| {npu:<5} 910B3 +\| )OK {{12}}", re.MULTILINE)
    out, n = pattern.subn(lambda m: m.group(1) + f"{word:<14}", table)
    assert n == 1
    return out


def health_key(npu: int, chip: int | None = None) -> str:
    return " ".join(health_argv(npu, chip)[1:])


def outputs(table: str = TABLE, npus: range = range(8), **over: str | dict) -> dict:
    out: dict[str, str | dict] = {"info": table}
    for i in npus:
        out[f"info -t board -i {i}"] = (
            f"NPU ID                         : {i}\nChip Count                     : 1\n"
        )
        out[health_key(i)] = HEALTH_OK
    out.update({k.replace("_", " "): v for k, v in over.items()})
    return out


def judge(tmp_path: Path, outs: dict | None, policy: str = ""):
    root, bindir = tmp_path / "root", tmp_path / "bin"
    root.mkdir(exist_ok=True)
    bindir.mkdir(exist_ok=True)
    if outs is not None:
        standin(bindir, "npu-smi", outs)
    report = run_node(root, bindir, policy, only=[CHECK])
    return report.result(CHECK)


def test_all_chips_ok_passes(tmp_path):
    r = judge(tmp_path, outputs())
    assert r.status is Status.PASS, r.summary
    assert "8 chips" in r.summary


def test_warning_in_table_warns_naming_the_chip(tmp_path):
    r = judge(tmp_path, outputs(with_health(TABLE, 2, "Warning")))
    assert r.status is Status.WARN
    assert "NPU 2 chip 0 is Warning" in r.summary


@pytest.mark.parametrize("word", ["Alarm", "Critical", "UNKNOWN", "Fault"])
def test_anything_but_ok_or_warning_fails(tmp_path, word):
    r = judge(tmp_path, outputs(with_health(TABLE, 5, word)))
    assert r.status is Status.FAIL
    assert f"NPU 5 chip 0 is {word}" in r.summary


def test_alarm_block_names_error_code_and_information(tmp_path):
    outs = outputs(with_health(TABLE, 3, "Alarm"))
    outs[health_key(3)] = HEALTH_ALARM
    r = judge(tmp_path, outs)
    assert r.status is Status.FAIL
    assert "NPU 3 chip 0 is Alarm (error code 80E18005, 80CB8009: HBM multi-bit ECC error; " in (
        r.summary
    )
    assert "\n" not in r.summary
    assert any(e.source == "npu-smi info -t health -i 3" for e in r.evidence)


def test_health_block_worse_than_table_fails(tmp_path):
    outs = outputs()
    outs[health_key(6)] = HEALTH_ALARM.replace("Alarm", "Critical")
    r = judge(tmp_path, outs)
    assert r.status is Status.FAIL
    assert "NPU 6 chip 0 is Critical" in r.summary


def test_fail_outranks_warning_and_both_are_named(tmp_path):
    table = with_health(with_health(TABLE, 1, "Warning"), 4, "Alarm")
    r = judge(tmp_path, outputs(table))
    assert r.status is Status.FAIL
    assert r.summary.index("NPU 4") < r.summary.index("NPU 1")


def test_health_query_exiting_255_fails(tmp_path):
    outs = outputs()
    outs[health_key(7)] = {"stdout": INVALID_ID, "rc": 255}
    r = judge(tmp_path, outs)
    assert r.status is Status.FAIL
    assert "NPU 7 health query failed" in r.summary and "exited 255" in r.summary


def test_health_query_timing_out_fails(tmp_path):
    outs = outputs()
    outs[health_key(0)] = {"stdout": HEALTH_OK, "sleep": 5}
    r = judge(tmp_path, outs, "[driver]\nnpu_smi_timeout = 1\n")
    assert r.status is Status.FAIL
    assert "NPU 0 health query failed" in r.summary


@pytest.mark.parametrize(
    "garbage",
    ["", "\x00\x01\x02\xff\xfe binary \x7f\n" * 20, "Invalid card id.\n"],
    ids=["empty", "binary", "message"],
)
def test_unreadable_health_output_is_error_with_evidence(tmp_path, garbage):
    outs = outputs()
    outs[health_key(2)] = garbage
    r = judge(tmp_path, outs)
    assert r.status is Status.ERROR
    assert "NPU 2 health unreadable" in r.summary
    assert any(e.source == "npu-smi info -t health -i 2" for e in r.evidence)


def test_no_npu_smi_on_path_is_error(tmp_path):
    (tmp_path / "root/dev").mkdir(parents=True)
    (tmp_path / "root/dev/davinci0").write_text("")  # an NPU node whose npu-smi is missing
    r = judge(tmp_path, None)
    assert r.status is Status.ERROR
    assert "could not judge" in r.summary and "not found on PATH" in r.summary


def test_node_without_any_npu_skips_to_the_enumeration_check(tmp_path):
    r = judge(tmp_path, None)
    assert r.status is Status.SKIP
    assert "no NPU on this node" in r.summary and "DRV-NPU-001" in r.summary


@pytest.mark.parametrize(
    "info",
    [
        {"stdout": "", "stderr": "dcmi module initialize failed. ret is -8005\n", "rc": 255},
        "\x00\xff" * 50,
    ],
    ids=["exit255", "garbage"],
)
def test_npu_smi_without_table_is_error(tmp_path, info):
    r = judge(tmp_path, {"info": info})
    assert r.status is Status.ERROR
    assert "could not judge NPU health" in r.summary
    assert r.evidence and r.evidence[0].source == "npu-smi info"


def test_multi_chip_npu_is_asked_per_chip(tmp_path):
    outs = outputs(A3_TABLE, npus=range(0))
    for npu in range(8):
        outs[f"info -t board -i {npu}"] = "Chip Count                     : 2\n"
        for chip in (0, 1):
            outs[health_key(npu, chip)] = HEALTH_OK
    outs[health_key(0, 1)] = HEALTH_ALARM
    r = judge(tmp_path, outs)
    assert r.status is Status.FAIL
    assert "NPU 0 chip 1 is Alarm (error code 80E18005" in r.summary
    assert "NPU 0 chip 0" not in r.summary


def test_real_alarm_block_from_a_node(tmp_path):
    dump = read_fixture("node_dumps/ascend_mindcluster_npu_info_after_fixture.txt")
    block = dump.split("-t health\n", 1)[1].split("\ncat ", 1)[0]
    outs = outputs()
    outs[health_key(0)] = block
    r = judge(tmp_path, outs)
    assert r.status is Status.FAIL
    assert "NPU 0 chip 0 is Alarm (error code A4025021, 8C03A000, 8C084E00" in r.summary
    assert "heart beat lost" in r.summary


def test_real_warning_table(tmp_path):
    table = read_fixture(
        "npu_smi_info/health_Warning_handedited_namexxx_23.0.5_mind-cluster-doc.partial.txt"
    )
    outs = {"info": table, health_key(0): HEALTH_OK, health_key(7): HEALTH_OK, "*": ""}
    r = judge(tmp_path, outs)
    assert r.status is Status.WARN
    assert "NPU 0 chip 0 is Warning" in r.summary


@pytest.mark.parametrize("path", fixture_cases("npu_smi_info", "*.txt"))
def test_every_real_table_is_judged_without_a_crash(tmp_path, path):
    outs = {"info": path.read_text(errors="replace"), "*": HEALTH_OK}
    r = judge(tmp_path, outs)
    assert r.status in (Status.PASS, Status.WARN, Status.FAIL), r.summary
    assert "Traceback" not in r.summary
