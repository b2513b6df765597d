"""Tests for the npu-smi parsers on real outputs, the A3 layout, and hostile input."""

from __future__ import annotations

import json
import random
import time
from pathlib import Path

import pytest
from shared_fixtures import fixture, fixture_files, read_fixture

from ascend_audit.facts.npu_smi import (
    NpuSmiInfo,
    normalize_bus_id,
    parse_affinity,
    parse_info,
    parse_kv,
    parse_mapping,
    parse_topo,
)

DATA = Path(__file__).resolve().parents[1] / "data"
A3 = DATA / "npu_smi_info_a3_8npu.txt"
PARTIAL_DUMP = (
    "npu_smi_board/"
    "npu_info_before_example_info_health_ecc_board_usages_mind-cluster-doc.partial.txt"
)

B910 = ["c1", "c2", "81", "82", "01", "02", "41", "42"]

# Every file in npu_smi_info/: what a correct parser must read from it.
INFO = {
    "310P3_1npu_22.0.0-22.0.2_modelzoo-srcnn.txt": dict(
        tool="22.0.0",
        driver="22.0.2",
        layout="310p",
        npus=(0,),
        names=("310P3",),
        health={0: "OK"},
        power={0: 17.0},
        temp={0: 56},
        bus={0: "0000:af:00.0"},
        memory={0: (934, 23054)},
        hbm={0: (None, None)},
        procs=(),
        idle=(),
        proc_table=False,
    ),
    "310P3_1npu_22.0.0-22.0.3_modelzoo-bertNER.txt": dict(
        tool="22.0.0",
        driver="22.0.3",
        layout="310p",
        npus=(0,),
        names=("310P3",),
        health={0: "OK"},
        power={0: 17.1},
        temp={0: 56},
        bus={0: "0000:86:00.0"},
        memory={0: (3292, 21527)},
        hbm={0: (None, None)},
        procs=(),
        idle=(),
        proc_table=False,
    ),
    "310P3_1npu_id2144_powerNA_22.0.2-22.0.4_modelzoo-dbnet.txt": dict(
        tool="22.0.2",
        driver="22.0.4",
        layout="310p",
        npus=(2144,),
        names=("310P3",),
        health={2144: "OK"},
        power={2144: None},
        temp={2144: 47},
        bus={2144: "0000:86:00.0"},
        memory={2144: (1807, 21527)},
        hbm={2144: (None, None)},
        procs=(),
        idle=(),
        proc_table=False,
    ),
    "910-class_namexxx_8npu_23.0.rc3-23.0.rc2.3_ddr+hbm_python_procs_mind-cluster-doc.txt": dict(
        tool="23.0.rc3",
        driver="23.0.rc2.3",
        layout="910",
        npus=tuple(range(8)),
        names=("xxx",),
        health=dict.fromkeys(range(8), "OK"),
        power={0: 73.4, 1: 69.6, 2: 70.0, 3: 69.6, 4: 71.3, 5: 67.0, 6: 71.7, 7: 69.1},
        temp={0: 44, 1: 39, 2: 36, 3: 44, 4: 40, 5: 36, 6: 37, 7: 42},
        bus={
            0: "0000:c1:00.0",
            1: "0000:81:00.0",
            2: "0000:41:00.0",
            3: "0000:01:00.0",
            4: "0000:c2:00.0",
            5: "0000:82:00.0",
            6: "0000:42:00.0",
            7: "0000:02:00.0",
        },
        memory={0: (4565, 15137), 3: (3845, 15039), 7: (4690, 15039)},
        hbm={0: (30710, 32768), 3: (30709, 32768), 7: (30710, 32768)},
        hugepages={0: (1123, 1123)},
        procs=(
            (0, 0, 139667, "python", 30780),
            (1, 0, 139577, "python", 30782),
            (2, 0, 139446, "python", 30780),
            (3, 0, 139372, "python", 30780),
            (4, 0, 139258, "python", 30780),
            (5, 0, 139163, "python", 30780),
            (6, 0, 139126, "python", 30780),
            (7, 0, 139090, "python", 30780),
        ),
        idle=(),
        proc_table=True,
    ),
    "910B1_8npu_24.1.0_oneproc_emptyname_vllm-ascend-312.txt": dict(
        tool="24.1.0",
        driver="24.1.0",
        layout="910",
        npus=tuple(range(8)),
        names=("910B1",),
        health=dict.fromkeys(range(8), "OK"),
        power={0: 89.1, 4: 92.7, 7: 91.1},
        temp={0: 32, 6: 30},
        bus=dict(
            enumerate(f"0000:{b}:00.0" for b in ["c1", "01", "c2", "02", "81", "41", "82", "42"])
        ),
        memory={0: (0, 0)},
        hbm={0: (3437, 65536), 1: (3378, 65536), 7: (3380, 65536)},
        procs=((0, 0, 641248, "", 113),),
        idle=(1, 2, 3, 4, 5, 6, 7),
        proc_table=True,
    ),
    "910B2_2npu_26.0.rc1_wide116_container_pid_fixture.partial.txt": dict(
        tool="26.0.rc1",
        driver="26.0.rc1",
        layout="910-wide",
        npus=(0, 1),
        names=("910B2",),
        health={0: "OK", 1: "OK"},
        power={0: 424.0, 1: 93.6},
        temp={0: 64, 1: 44},
        bus={0: "0000:c1:00.0", 1: "0000:01:00.0"},
        memory={0: (0, 0)},
        hbm={0: (38711, 65536), 1: (3406, 65536)},
        aicore={0: 100, 1: 0},
        procs=((0, 0, 1504884, "", 35358),),
        container_pids=(412309,),
        idle=(1,),
        proc_table=True,
    ),
    "910B2_8npu_23.0.3_noproc_vllm-ascend-901.txt": dict(
        tool="23.0.3",
        driver="23.0.3",
        layout="910",
        npus=tuple(range(8)),
        names=("910B2",),
        health=dict.fromkeys(range(8), "OK"),
        power={0: 96.9, 1: 96.3, 2: 90.3, 3: 92.9, 4: 96.4, 5: 94.0, 6: 94.4, 7: 90.3},
        temp={0: 40, 4: 44, 7: 43},
        bus=dict(enumerate(f"0000:{b}:00.0" for b in B910)),
        memory={0: (0, 0)},
        hbm={0: (3334, 65536), 4: (3335, 65536), 7: (3336, 65536)},
        procs=(),
        idle=tuple(range(8)),
        proc_table=True,
    ),
    "910B3_8npu_24.1.rc1.b030_noproc_ms-swift.txt": dict(
        tool="24.1.rc1.b030",
        driver="24.1.rc1.b030",
        layout="910",
        npus=tuple(range(8)),
        names=("910B3",),
        health=dict.fromkeys(range(8), "OK"),
        power={0: 101.8, 6: 103.8, 7: 98.2},
        temp={0: 43, 1: 39},
        bus=dict(enumerate(f"0000:{b}:00.0" for b in B910)),
        memory={0: (0, 0)},
        hbm={0: (3318, 65536), 1: (3314, 65536), 7: (3315, 65536)},
        procs=(),
        idle=(),
        proc_table=False,
    ),
    "910B4_1npu_id5_25.5.2_noproc_container.txt": dict(
        tool="25.5.2",
        driver="25.5.2",
        layout="910",
        npus=(5,),
        names=("910B4",),
        health={5: "OK"},
        power={5: 89.9},
        temp={5: 39},
        bus={5: "0000:41:00.0"},
        memory={5: (0, 0)},
        hbm={5: (2922, 32768)},
        procs=(),
        idle=(5,),
        proc_table=True,
    ),
    "Ascend950_1npu_newlayout_NPUUtil_doc-example_driver-repo.txt": dict(
        tool="x.x.x",
        driver="x.x.x",
        layout="950",
        npus=(0,),
        names=("xxx",),
        health={0: "OK"},
        power={0: 204.4},
        temp={0: 56},
        bus={0: "0000:91:00.0"},
        memory={0: (0, 0)},
        hbm={0: (4439, 86016)},
        aicore={0: 0},
        procs=(),
        idle=(0,),
        proc_table=True,
    ),
    "health_Warning_handedited_namexxx_23.0.5_mind-cluster-doc.partial.txt": dict(
        tool="23.0.5",
        driver="23.0.5",
        layout="910",
        npus=(0, 7),
        names=("xxx",),
        health={0: "Warning", 7: "OK"},
        power={0: 73.1, 7: 67.0},
        temp={0: 37, 7: 38},
        bus={0: "0000:61:00.0", 7: "0000:3d:00.0"},
        memory={0: (920, 13553), 7: (2346, 15567)},
        hbm={0: (0, 32768), 7: (0, 32768)},
        procs=(),
        idle=(0, 7),
        proc_table=True,
        elided=True,
    ),
}


def test_every_npu_smi_info_fixture_has_expectations() -> None:
    names = {p.name for p in fixture_files("npu_smi_info", "*.txt")}
    if not names:
        pytest.skip("../shared/fixtures/npu_smi_info is not beside this checkout")
    assert names == set(INFO), f"fixtures without expectations: {names - set(INFO)}"


@pytest.mark.parametrize("name", sorted(INFO))
def test_info_fixture(name: str) -> None:
    exp = INFO[name]
    info = parse_info(read_fixture(f"npu_smi_info/{name}"))
    assert info.tool_version == exp["tool"]
    assert info.driver_version == exp["driver"]
    assert info.layout == exp["layout"]
    assert info.npus == exp["npus"]
    assert info.names == exp["names"]
    assert info.chip_count == len(exp["npus"])
    assert all(c.chip_id == 0 for c in info.chips)
    for npu, health in exp["health"].items():
        assert info.chips_of(npu)[0].health == health
    for npu, power in exp["power"].items():
        assert info.chips_of(npu)[0].power_w == power
    for npu, temp in exp["temp"].items():
        assert info.chips_of(npu)[0].temperature_c == temp
    for npu, bus in exp["bus"].items():
        assert info.chips_of(npu)[0].bus_id == bus
    for npu, (used, total) in exp["memory"].items():
        c = info.chip(npu, 0)
        assert c is not None
        assert (c.memory_used_mb, c.memory_total_mb) == (used, total)
    for npu, (used, total) in exp["hbm"].items():
        c = info.chip(npu, 0)
        assert c is not None
        assert (c.hbm_used_mb, c.hbm_total_mb) == (used, total)
    for npu, (used, total) in exp.get("hugepages", {}).items():
        c = info.chip(npu, 0)
        assert c is not None
        assert (c.hugepages_used, c.hugepages_total) == (used, total)
    for npu, util in exp.get("aicore", {}).items():
        assert info.chips_of(npu)[0].aicore_util == util
    got = tuple((p.npu_id, p.chip_id, p.pid, p.name, p.memory_mb) for p in info.processes)
    assert got == exp["procs"]
    if "container_pids" in exp:
        assert info.has_container_pid
        assert tuple(p.container_pid for p in info.processes) == exp["container_pids"]
    else:
        assert not info.has_container_pid
        assert all(p.container_pid is None for p in info.processes)
    assert info.idle_npus == exp["idle"]
    assert info.has_process_table == exp["proc_table"]
    if exp.get("elided"):
        assert any("elided" in p for p in info.problems)
    else:
        assert info.problems == ()
        assert info.ok
    json.dumps(info.to_dict())


def test_info_310p_reads_device_column_as_logic_id() -> None:
    info = parse_info(read_fixture("npu_smi_info/310P3_1npu_22.0.0-22.0.2_modelzoo-srcnn.txt"))
    chip = info.chips[0]
    assert chip.logic_id == 0
    assert chip.phy_id is None


def test_info_crlf_fixture_reads_like_lf() -> None:
    name = "npu_smi_info/310P3_1npu_id2144_powerNA_22.0.2-22.0.4_modelzoo-dbnet.txt"
    text = fixture(name).read_bytes().decode("utf-8", errors="replace")
    assert "\r\n" in text
    assert parse_info(text).chips == parse_info(text.replace("\r\n", "\n")).chips


def test_info_a3_two_chips_per_npu() -> None:
    info = parse_info(A3.read_text(encoding="utf-8"))
    assert info.problems == ()
    assert info.layout == "a3"
    assert info.tool_version == info.driver_version == "25.2.1"
    assert info.npus == tuple(range(8))
    assert info.chip_count == 16
    assert [c.phy_id for c in info.chips] == list(range(16))
    assert [(c.npu_id, c.chip_id) for c in info.chips] == [(n, k) for n in range(8) for k in (0, 1)]
    assert info.names == ("Ascend910",)
    assert all(c.power_w is None for c in info.chips if c.chip_id == 1)
    assert all(c.power_w is not None for c in info.chips if c.chip_id == 0)
    assert info.chip(0, 0).bus_id == "0000:9d:00.0"
    assert info.chip(0, 1).bus_id == "0000:9f:00.0"
    assert info.chip(4, 0).hbm_used_mb == 62001
    assert info.chip(4, 1).hbm_total_mb == 65536
    assert len(info.chips_of(3)) == 2
    assert [(p.npu_id, p.chip_id, p.pid) for p in info.processes] == [
        (4, 0, 2291044),
        (4, 1, 2291044),
    ]
    assert info.idle_npus == (0, 1, 2, 3, 5, 6, 7)
    assert info.processes_on(4)[0].name == "python3"


def test_info_in_node_dump_reads_first_table_and_reports_the_rest() -> None:
    info = parse_info(read_fixture("node_dumps/ascend_npu-smi_outputs_faultdiag_doc.txt"))
    assert info.tool_version == "24.1.rc1"
    assert info.npus == (7,)
    assert (info.chips[0].memory_used_mb, info.chips[0].memory_total_mb) == (2505, 15567)
    assert info.chips[0].bus_id == "0000:3d:00.0"
    assert any("second npu-smi table" in p for p in info.problems)


def test_info_in_partial_board_dump() -> None:
    name = PARTIAL_DUMP
    info = parse_info(read_fixture(name))
    assert info.driver_version == "23.0.5"
    assert info.npus == (0, 7)
    assert info.chip(0, 0).memory_total_mb == 13553
    assert info.idle_npus == (0, 7)


def test_info_empty_npu_smi_output_in_dump() -> None:
    name = "npu_smi_board/npu_info_before_-m_910A_emptyinfo_fixture_mind-cluster-faultdiag.txt"
    info = parse_info(read_fixture(name))
    assert info.chips == ()
    assert info.problems == ("no npu-smi info table found",)
    assert not info.ok


# ----------------------------------------------------------------- hostile input for parse_info


@pytest.mark.parametrize("text", ["", "\n\n", "   ", "\x00\x00", "|", "+", "| |", "+===+"])
def test_info_empty_and_trivial(text: str) -> None:
    info = parse_info(text)
    assert info.chips == ()
    assert info.problems


def test_info_non_str_input_does_not_raise() -> None:
    info = parse_info(None)  # type: ignore[arg-type]
    assert info.chips == ()
    assert info.problems


def _truncations(text: str, count: int, seed: int) -> list[int]:
    rng = random.Random(seed)
    return sorted(rng.sample(range(1, len(text)), min(count, len(text) - 1)))


TRUNC_SOURCES = [
    "npu_smi_info/910-class_namexxx_8npu_23.0.rc3-23.0.rc2.3_ddr+hbm_python_procs_mind-cluster-doc.txt",
    "npu_smi_info/910B2_2npu_26.0.rc1_wide116_container_pid_fixture.partial.txt",
    "npu_smi_info/Ascend950_1npu_newlayout_NPUUtil_doc-example_driver-repo.txt",
]


@pytest.mark.parametrize("source", [*TRUNC_SOURCES, "a3"])
@pytest.mark.parametrize("seed", range(4))
def test_info_truncated_anywhere(source: str, seed: int) -> None:
    text = A3.read_text(encoding="utf-8") if source == "a3" else read_fixture(source)
    full = parse_info(text)
    keys = [(c.npu_id, c.chip_id) for c in full.chips]
    for cut in _truncations(text, 25, seed):
        part = parse_info(text[:cut])
        got = [(c.npu_id, c.chip_id) for c in part.chips]
        assert got == keys[: len(got)], f"cut at {cut}"
        # every chip but the last one read is complete and equal to the full parse
        for a, b in zip(part.chips[:-1], full.chips):
            assert a == b
        if not part.chips:
            assert part.problems
        json.dumps(part.to_dict())


def test_info_truncated_mid_block_reports_it() -> None:
    text = A3.read_text(encoding="utf-8")
    lines = text.splitlines()
    info = parse_info("\n".join(lines[:7]))  # header + first line of the first block
    assert info.chips == ()
    assert any("expected 2-line chip block" in p for p in info.problems)


def test_info_reordered_metric_columns() -> None:
    text = read_fixture("npu_smi_info/910B3_8npu_24.1.rc1.b030_noproc_ms-swift.txt")
    lines = text.splitlines()
    swapped = []
    for line in lines:
        if "Power(W)" in line:
            line = line.replace("Power(W)    Temp(C)     ", "Temp(C)     Power(W)    ")
        elif line.startswith("| 0     910B3"):
            line = line.replace("101.8       43          ", "43          101.8       ")
        if "AICore(%)" in line:
            line = line.replace(
                "Memory-Usage(MB)  HBM-Usage(MB)   ", "HBM-Usage(MB)     Memory-Usage(MB)"
            )
        swapped.append(line)
    swapped_text = "\n".join(swapped)
    # the second row of NPU 0: swap the memory and HBM values too
    swapped_text = swapped_text.replace(
        "| 0           0    / 0          3318 / 65536  ",
        "| 0           3318 / 65536      0    / 0       ",
    )
    info = parse_info(swapped_text)
    chip = info.chip(0, 0)
    assert chip is not None
    assert chip.power_w == 101.8
    assert chip.temperature_c == 43
    assert (chip.hbm_used_mb, chip.hbm_total_mb) == (3318, 65536)
    assert (chip.memory_used_mb, chip.memory_total_mb) == (0, 0)


def test_info_reordered_cells() -> None:
    text = (
        "| npu-smi 24.1.0   Version: 24.1.0 |\n"
        "| Health | NPU   Name | Power(W)  Temp(C)  Hugepages-Usage(page) |\n"
        "| Bus-Id | Chip       | AICore(%) Memory-Usage(MB) HBM-Usage(MB) |\n"
        "+====+\n"
        "| OK | 3     910B2 | 91.0  40  0 / 0 |\n"
        "| 0000:C1:00.0 | 0 | 7  0 / 0  3000 / 65536 |\n"
    )
    info = parse_info(text)
    assert info.problems == ()
    c = info.chips[0]
    assert (c.npu_id, c.name, c.health, c.bus_id) == (3, "910B2", "OK", "0000:c1:00.0")
    assert (c.aicore_util, c.hbm_used_mb) == (7, 3000)


def test_info_non_utf8_decoded_with_replacement() -> None:
    raw = read_fixture("npu_smi_info/910B4_1npu_id5_25.5.2_noproc_container.txt").encode()
    raw = raw.replace(b"910B4", b"910\xff\xfe4").replace(b"| OK ", b"| O\xc3K ")
    info = parse_info(raw.decode("utf-8", errors="replace"))
    assert info.npus == (5,)
    assert "\ufffd" in info.chips[0].name
    assert info.chips[0].hbm_used_mb == 2922


def test_info_binary_garbage() -> None:
    rng = random.Random(7)
    for _ in range(20):
        blob = bytes(rng.randrange(256) for _ in range(3000))
        info = parse_info(blob.decode("utf-8", errors="replace"))
        assert isinstance(info, NpuSmiInfo)
        json.dumps(info.to_dict())


def test_info_garbage_rows_inside_a_table() -> None:
    text = A3.read_text(encoding="utf-8").replace("| 0000:9F:00.0  |", "| 0000:ZZ:00.0  |", 1)
    text = text.replace("3414 / 65536", "34x4 / 65536", 1)
    info = parse_info(text)
    assert info.chip_count == 16
    assert info.chip(0, 1).bus_id is None
    assert info.chip(1, 0).hbm_used_mb is None
    assert any("bus id" in p for p in info.problems)
    assert any("hbm" in p for p in info.problems)


def test_info_huge_input_is_linear() -> None:
    header = A3.read_text(encoding="utf-8").splitlines()[:6]
    block = [
        "| {n:<6}Ascend910           | OK            | 178.4       36                0    / 0"
        "             |",
        "| 0     {n:<20}| 0000:9D:00.0  | 0           0    / 0          3412 / 65536         |",
        "+===========================+===============+====================================================+",
    ]
    lines = list(header)
    for n in range(17000):
        lines.extend(b.format(n=n) for b in block)
    text = "\n".join(lines)
    assert len(lines) > 50000
    t0 = time.perf_counter()
    info = parse_info(text)
    assert time.perf_counter() - t0 < 5
    assert info.chip_count == 17000
    assert info.npus[-1] == 16999


def test_info_long_line_is_fast() -> None:
    t0 = time.perf_counter()
    info = parse_info("| " + " " * 300000 + "/" + " " * 300000 + "|\n" + "|" * 200000)
    assert time.perf_counter() - t0 < 5
    assert info.chips == ()


def test_normalize_bus_id() -> None:
    assert normalize_bus_id("0000:AF:00.0") == "0000:af:00.0"
    assert normalize_bus_id("AF:00.0") == "0000:af:00.0"
    assert normalize_bus_id("  0001:3d:00.1 ") == "0001:3d:00.1"
    assert normalize_bus_id("NA") is None
    assert normalize_bus_id("0000:AF:00") is None


# ----------------------------------------------------------------- key/value outputs


def test_every_board_fixture_is_covered() -> None:
    names = {p.name for p in fixture_files("npu_smi_board", "*.txt")}
    if not names:
        pytest.skip("../shared/fixtures/npu_smi_board is not beside this checkout")
    covered = {
        "board_-c0_-t_board_chipname-redacted_mind-cluster-doc.txt",
        "board_-t_board_Ascend950_D806_doc-example_driver-repo.txt",
        "board_-t_board_npu0_sw23.0.5_fw7.1.0.7.220_mind-cluster-doc.txt",
        "common_-t_common_npu0_mind-cluster-doc.txt",
        "info_-m_Ascend950_doc-example_driver-repo.txt",
        "npu_info_before_-m_910A_emptyinfo_fixture_mind-cluster-faultdiag.txt",
        "npu_info_before_example_info_health_ecc_board_usages_mind-cluster-doc.partial.txt",
        "topo_910B3_8npu_hccs_ms-swift.txt",
        "topo_Ascend950_8npu_SYS_pcie-only_doc-example_driver-repo.txt",
        "topo_Ascend950_8npu_UB-pairs_doc-example_driver-repo.txt",
        "topo_Ascend950_8npu_UB-quads_doc-example_driver-repo.txt",
    }
    assert names == covered


def test_kv_chip_board() -> None:
    kv = parse_kv(
        read_fixture("npu_smi_board/board_-c0_-t_board_chipname-redacted_mind-cluster-doc.txt")
    )
    assert kv.problems == ()
    assert len(kv.blocks) == 1
    b = kv.blocks[0]
    assert b.kind == "chip_board"
    assert (b.npu_id, b.chip_id) == (0, 0)
    assert kv.chip_type == "Ascend"
    assert kv.chip_name == "xxx"
    assert kv.chip_version == "V1"
    assert kv.board_id == "0x02"
    assert b.get("PCB ID") is None and b.has("PCB ID")
    assert b.get("VDie ID") == "42C711D4 20B03704 4A10C8D4 14CC040A D2102003"
    assert kv.bus_id == "0000:61:00.0"
    assert kv.firmware_version == "7.1.0.7.220"
    assert kv.software_version is None


def test_kv_board_950() -> None:
    kv = parse_kv(
        read_fixture("npu_smi_board/board_-t_board_Ascend950_D806_doc-example_driver-repo.txt")
    )
    assert kv.problems == ()
    assert kv.blocks[0].kind == "board"
    assert len(kv.blocks[0].items) == 25
    assert kv.npu_id == 0
    assert kv.pci_vendor_id == "0x19e5"
    assert kv.pci_device_id == "0xd806"
    assert kv.blocks[0].get_int("Subsystem Device ID") == 0x4004
    assert kv.compatibility == "OK"
    assert kv.chip_count == 1
    assert kv.board_id == "0x1b"
    assert kv.first("Main Board ID") == "0x68(1P)"
    assert kv.serial_number == "xxx"
    assert kv.product_name == "xxx"
    assert kv.firmware_version == kv.software_version == "xxx"
    assert kv.bus_id == "0000:f1:00.0"
    assert kv.first("Class ID") is None
    assert kv.first("DDie ID") == "870408E3 2120D518 77936EE6 80B40A0A D4100003"


def test_kv_board_910() -> None:
    name = "npu_smi_board/board_-t_board_npu0_sw23.0.5_fw7.1.0.7.220_mind-cluster-doc.txt"
    kv = parse_kv(read_fixture(name))
    assert kv.problems == ()
    assert kv.blocks[0].kind == "board"
    assert kv.software_version == "23.0.5"
    assert kv.firmware_version == "7.1.0.7.220"
    assert kv.compatibility == "OK"
    assert kv.pci_vendor_id == "0x19e5"
    assert kv.pci_device_id == "0xd801"
    assert kv.blocks[0].get_int("Subsystem Vendor ID") == 0x200
    assert kv.first("PCB ID") == "A"


def test_kv_common() -> None:
    kv = parse_kv(read_fixture("npu_smi_board/common_-t_common_npu0_mind-cluster-doc.txt"))
    b = kv.blocks[0]
    assert b.kind == "common"
    assert b.get_int("Aicore Count") == 30
    assert b.get_int("Aicore Freq(MHZ)") == 900
    assert b.get_int("Temperature(C)") == 41
    assert b.get("NPU Real-time Power(W)") == "71.7"
    assert b.get_int("Memory Usage Rate(%)") == 6


def test_kv_dump_with_tabs_and_mapping() -> None:
    name = "npu_smi_board/npu_info_before_-m_910A_emptyinfo_fixture_mind-cluster-faultdiag.txt"
    text = read_fixture(name)
    kv = parse_kv(text)
    kinds = [b.kind for b in kv.blocks if b.command and "npu-smi" in b.command]
    assert kinds == ["chip_board", "usages", "board", "health"]
    assert kv.chip_name == "910A"
    assert kv.of_kind("usages")[0].get_int("HBM Capacity(MB)") == 31129
    assert kv.pci_vendor_id == "0x19e5"  # written 0x19E5 here
    assert kv.health == "OK"
    assert kv.error_codes == ()
    assert kv.error_information is None
    board = kv.of_kind("board")[0]
    assert board.command == "/usr/local/bin/npu-smi info -i 0 -t board"
    assert board.get("Software Version") == "23.0.5"
    mapping = parse_mapping(text)
    assert mapping.problems == ()
    assert mapping.columns == ("npu_id", "chip_id", "chip_logic_id", "chip_name")
    assert mapping.npus == tuple(range(8))
    assert mapping.chip_names == ("Ascend 910A",)
    assert [r.chip_logic_id for r in mapping.rows] == list(range(8))
    assert all(r.chip_id == 0 and r.chip_phy_id is None for r in mapping.rows)


def test_kv_partial_dump_blocks() -> None:
    name = PARTIAL_DUMP
    kv = parse_kv(read_fixture(name))
    assert [b.kind for b in kv.blocks] == [
        "health",
        "ecc",
        "board",
        "chip_board",
        "usages",
        "health",
    ]
    assert kv.health_statuses == ("OK", "OK")
    assert kv.ecc_errors == {}
    ecc = kv.of_kind("ecc")[0]
    assert ecc.get_int("HBM Double Bit Error Count") == 0
    assert ecc.npu_id == 0 and ecc.chip_id == 0
    assert kv.of_kind("usages")[0].get_int("HBM Capacity(MB)") == 32768
    assert kv.software_version == "23.0.5"


def test_kv_mapping_950() -> None:
    m = parse_mapping(read_fixture("npu_smi_board/info_-m_Ascend950_doc-example_driver-repo.txt"))
    assert m.problems == ()
    assert m.columns == ("npu_id", "slot_id", "chip_id", "chip_phy_id", "chip_name")
    assert len(m.rows) == 1
    r = m.rows[0]
    assert (r.npu_id, r.slot_id, r.chip_id, r.chip_phy_id, r.chip_name) == (0, 0, 0, 0, "xxx")
    json.dumps(m.to_dict())


def test_mapping_in_doc_dump_and_reordered() -> None:
    m = parse_mapping(read_fixture("node_dumps/ascend_npu-smi_topo_and_mapping_docs.txt"))
    assert len(m.rows) == 1 and m.rows[0].chip_phy_id == 0
    text = (
        "Chip Name      NPU ID     Chip ID    Chip Logic ID\n"
        "Ascend 910B3   3          0          3\n"
    )
    r = parse_mapping(text).rows[0]
    assert (r.chip_name, r.npu_id, r.chip_id, r.chip_logic_id) == ("Ascend 910B3", 3, 0, 3)
    bad = parse_mapping("NPU ID   Chip ID   Chip Name\n0   zz   Ascend 910A\n-1  0  Ascend 910A\n")
    assert [r.npu_id for r in bad.rows] == [-1]
    assert any("unreadable" in p for p in bad.problems)


def test_kv_health_alarm_with_continuations() -> None:
    kv = parse_kv(read_fixture("node_dumps/ascend_mindcluster_npu_info_after_fixture.txt"))
    assert kv.health == "Alarm"
    assert kv.error_codes == ("A4025021", "8C03A000", "8C084E00")
    info = kv.error_information or ""
    assert info.startswith("ascend_monitor adda heart beat lost error")
    assert "Heartbeat Lost." in info
    assert info.count("\n") == 2
    assert "Invalid card id." in kv.messages
    assert kv.of_kind("board") == ()


def test_kv_faultdiag_doc() -> None:
    kv = parse_kv(read_fixture("node_dumps/ascend_npu-smi_outputs_faultdiag_doc.txt"))
    assert kv.blocks[0].kind == "ecc"
    assert kv.blocks[0].npu_id == 1
    assert kv.health_statuses == ("OK", "OK", "OK")
    assert kv.pci_device_id == "0xd801"
    assert kv.firmware_version == "7.1.0.7.220"
    assert len(kv.of_kind("chip_board")) == 2


def test_kv_repeated_key_starts_a_new_block_and_ecc_counts() -> None:
    text = (
        "\tNPU ID : 0\n\tHBM Double Bit Error Count : 2\n\tChip ID : 0\n"
        "\tNPU ID : 1\n\tHBM Double Bit Error Count : 3\n"
        "\tError Code : a4025021,NA\n"
    )
    kv = parse_kv(text)
    assert [b.npu_id for b in kv.blocks] == [0, 1]
    assert kv.ecc_errors == {"HBM Double Bit Error Count": 5}
    assert kv.error_codes == ("A4025021",)


@pytest.mark.parametrize(
    "text",
    ["", "\x00", "no colon here", "Invalid card id.", ":::", " : value", "\ufffd\ufffd : \ufffd"],
)
def test_kv_hostile_small(text: str) -> None:
    kv = parse_kv(text)
    assert isinstance(kv.problems, tuple)
    json.dumps(kv.to_dict())
    if not kv.blocks:
        assert kv.problems


@pytest.mark.parametrize("seed", range(3))
def test_kv_truncated(seed: int) -> None:
    text = read_fixture("npu_smi_board/board_-t_board_Ascend950_D806_doc-example_driver-repo.txt")
    full = parse_kv(text).blocks[0].items
    for cut in _truncations(text, 30, seed):
        kv = parse_kv(text[:cut])
        items = kv.blocks[0].items if kv.blocks else ()
        assert [k for k, _ in items] == [k for k, _ in full[: len(items)]]
        for (k, v), (fk, fv) in zip(items[:-1], full):
            assert (k, v) == (fk, fv)


def test_kv_huge_input_is_fast() -> None:
    block = read_fixture(
        "npu_smi_board/board_-t_board_npu0_sw23.0.5_fw7.1.0.7.220_mind-cluster-doc.txt"
    )
    text = (block + "\n") * 3500
    assert text.count("\n") > 50000
    t0 = time.perf_counter()
    kv = parse_kv(text)
    assert time.perf_counter() - t0 < 5
    assert len(kv.blocks) == 3500
    assert set(kv.values("Firmware Version")) == {"7.1.0.7.220"}


def test_kv_binary_garbage() -> None:
    rng = random.Random(11)
    blob = bytes(rng.randrange(256) for _ in range(20000)).decode("utf-8", errors="replace")
    kv = parse_kv(blob + "\nFirmware Version : 7.1.0.7.220\n")
    assert kv.firmware_version == "7.1.0.7.220"


# ----------------------------------------------------------------- topology

TOPO = {
    "topo_910B3_8npu_hccs_ms-swift.txt": (
        {"HCCS"},
        {0: ((144, 167),), 2: ((96, 119),), 4: ((0, 23),), 7: ((48, 71),)},
        {"X", "SYS", "PHB", "PIX", "PXB", "HCCS", "NA"},
    ),
    "topo_Ascend950_8npu_SYS_pcie-only_doc-example_driver-repo.txt": (
        {"SYS"},
        {0: ((0, 63), (128, 191)), 7: ((64, 127), (192, 255))},
        {"X", "SYS", "PHB", "PIX", "PXB", "SIO", "UB", "NA"},
    ),
    "topo_Ascend950_8npu_UB-pairs_doc-example_driver-repo.txt": (
        {"SYS", "UB"},
        {3: ((0, 63), (128, 191)), 4: ((64, 127), (192, 255))},
        {"X", "SYS", "PHB", "PIX", "PXB", "SIO", "UB", "NA"},
    ),
    "topo_Ascend950_8npu_UB-quads_doc-example_driver-repo.txt": (
        {"SYS", "UB"},
        {0: ((0, 63), (128, 191)), 5: ((64, 127), (192, 255))},
        {"X", "SYS", "PHB", "PIX", "PXB", "SIO", "UB", "NA"},
    ),
}


@pytest.mark.parametrize("name", sorted(TOPO))
def test_topo_fixture(name: str) -> None:
    kinds, aff, legend = TOPO[name]
    topo = parse_topo(read_fixture(f"npu_smi_board/{name}"))
    assert topo.problems == ()
    assert topo.npus == tuple(range(8))
    assert topo.link_types == kinds
    assert len(topo.affinity) == 8
    for npu, ranges in aff.items():
        assert topo.affinity_of(npu) == ranges
    assert {code for code, _ in topo.legend} == legend
    assert all(topo.link(n, n) == "X" for n in range(8))
    json.dumps(topo.to_dict())


def test_topo_shapes() -> None:
    hccs = parse_topo(read_fixture("npu_smi_board/topo_910B3_8npu_hccs_ms-swift.txt"))
    assert hccs.is_full_mesh("HCCS")
    assert hccs.cpus_of(0) == frozenset(range(144, 168))
    pairs = parse_topo(
        read_fixture("npu_smi_board/topo_Ascend950_8npu_UB-pairs_doc-example_driver-repo.txt")
    )
    assert [pairs.peers(n, "UB") for n in range(8)] == [
        (1,),
        (0,),
        (3,),
        (2,),
        (5,),
        (4,),
        (7,),
        (6,),
    ]
    assert pairs.link(0, 2) == "SYS"
    quads = parse_topo(
        read_fixture("npu_smi_board/topo_Ascend950_8npu_UB-quads_doc-example_driver-repo.txt")
    )
    assert quads.peers(5, "UB") == (4, 6, 7)
    assert quads.link(3, 4) == "SYS"
    assert not quads.is_full_mesh("UB")
    sys_only = parse_topo(
        read_fixture("npu_smi_board/topo_Ascend950_8npu_SYS_pcie-only_doc-example_driver-repo.txt")
    )
    assert sys_only.cpus_of(5) == frozenset([*range(64, 128), *range(192, 256)])


def test_topo_in_doc_dump_reads_first_matrix() -> None:
    topo = parse_topo(read_fixture("node_dumps/ascend_npu-smi_topo_and_mapping_docs.txt"))
    assert topo.link_types == {"SYS"}
    assert any("second topology header" in p for p in topo.problems)


def test_topo_reordered_and_odd() -> None:
    text = (
        "      NPU2   NPU0   NPU1   CPU Affinity\n"
        "NPU0  PIX    X      FOO    0-3,8-11\n"
        "NPU1  PXB    FOO    X      garbage\n"
        "NPU2  X      PHB    PXB\n"
    )
    topo = parse_topo(text)
    assert topo.npus == (2, 0, 1)
    assert topo.link(0, 2) == "PIX"
    assert topo.link(1, 0) == "FOO"
    assert topo.affinity_of(0) == ((0, 3), (8, 11))
    assert topo.affinity_of(1) == ()
    probs = " ".join(topo.problems)
    assert "unknown link type 'FOO'" in probs
    assert "unreadable CPU affinity" in probs
    assert "no CPU affinity for NPU2" in probs
    assert "asymmetric link NPU0-NPU2" in probs


def test_parse_affinity() -> None:
    assert parse_affinity("0-23,48-71") == ((0, 23), (48, 71))
    assert parse_affinity("5") == ((5, 5),)
    assert parse_affinity("9-3") is None
    assert parse_affinity("a-b") is None
    assert parse_affinity("") is None


@pytest.mark.parametrize("text", ["", "Legend:", "NPU0", "NPU0 NPU1 CPU Affinity", "\x00" * 100])
def test_topo_hostile_small(text: str) -> None:
    topo = parse_topo(text)
    assert topo.links == () or topo.problems
    assert topo.problems


@pytest.mark.parametrize("seed", range(3))
def test_topo_truncated(seed: int) -> None:
    text = read_fixture("npu_smi_board/topo_Ascend950_8npu_UB-quads_doc-example_driver-repo.txt")
    full = parse_topo(text)
    for cut in _truncations(text, 30, seed):
        topo = parse_topo(text[:cut])
        for lk in topo.links[:-1]:
            assert full.link(lk.a, lk.b) == lk.kind


def test_topo_huge_is_fast() -> None:
    n = 220
    header = "      " + " ".join(f"NPU{i}" for i in range(n)) + "  CPU Affinity"
    rows = [
        f"NPU{i} " + " ".join("X" if i == j else "HCCS" for j in range(n)) + f" {i}-{i + 1}"
        for i in range(n)
    ]
    text = "\n".join([header, *rows])
    t0 = time.perf_counter()
    topo = parse_topo(text)
    assert time.perf_counter() - t0 < 5
    assert topo.is_full_mesh("HCCS")
    assert topo.affinity_of(219) == ((219, 220),)
