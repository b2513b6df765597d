"""Fake nodes built around the real field outputs in ../shared/fixtures: what each source says.

Each Scenario writes a node (sysroot + stand-in npu-smi) whose real parts are the fixture files
and whose invented parts follow the same formats, and states the verdicts the node deserves
according to the fixture's *.source.txt. tests/checks/test_driver_field.py judges them.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from fakenode import (
    FakeNpu,
    npu_smi_board,
    npu_smi_board_310p,
    npu_smi_info,
    npu_smi_info_310p,
    npu_smi_outputs,
)
from shared_fixtures import FIXTURES
from standins import standin
from sysroot import DIR, NPU_BDFS, Link, _pci_function, healthy_910b_node, local, write_tree

FIELD = FIXTURES / "field"
DRIVER_FILE = "/usr/local/Ascend/driver/version.info"
FIRMWARE_FILE = "/usr/local/Ascend/firmware/version.info"
INSTALL_INFO = "/etc/ascend_install.info"
TOOLKIT_DIR = "/usr/local/Ascend/ascend-toolkit"


def real(path: str) -> str:
    """A real fixture's text (the caller skips when ../shared/fixtures is absent)."""
    return (FIXTURES / path).read_text(encoding="utf-8", errors="replace")


@dataclass
class Node:
    """What a scenario writes: the tree, npu-smi's answers, the audit's environment, policy."""

    root: Path
    answers: dict[str, Any] = field(default_factory=dict)
    env: dict[str, str] = field(default_factory=dict)
    policy: str = ""


@dataclass(frozen=True)
class Scenario:
    """A node built from real outputs and the verdicts its sources say it deserves."""

    name: str
    fixtures: tuple[str, ...]
    build: Callable[[Path], Node]
    expected: dict[str, tuple[tuple[str, ...], str]]  # check id -> (statuses, summary substring)
    layer: tuple[str, ...] = ()  # acceptable driver-layer verdicts; () = not judged
    pending: str = ""  # why this verdict is still wrong (the test xfails strictly)


# --------------------------------------------------------------------------- tree edits


def put(root: Path, files: dict[str, str]) -> None:
    write_tree(root, files)


def drop(root: Path, *paths: str) -> None:
    for p in paths:
        lp = local(root, p)
        if lp.is_symlink() or lp.is_file():
            lp.unlink()
        elif lp.is_dir():
            shutil.rmtree(lp)


def as_container(root: Path, given: tuple[int, ...], all_davinci: int = 8) -> None:
    """Docker's marker and only the /dev/davinciN the container was given; the host /sys stays."""
    put(root, {"/.dockerenv": "", "/proc/1/cgroup": "0::/docker/4f1c0e5a33a8\n"})
    for i in range(all_davinci):
        if i not in given:
            drop(root, f"/dev/davinci{i}")
    for i in given:
        put(root, {f"/dev/davinci{i}": ""})
        os.chmod(local(root, f"/dev/davinci{i}"), 0o660)


def no_version_files(root: Path) -> None:
    drop(root, DRIVER_FILE, FIRMWARE_FILE, INSTALL_INFO)


def set_toolkit(root: Path, text: str, version: str, base: str = TOOLKIT_DIR) -> None:
    drop(root, f"{TOOLKIT_DIR}/latest", f"{TOOLKIT_DIR}/8.0.0")
    if base == TOOLKIT_DIR:
        put(root, {f"{base}/{version}/aarch64-linux/ascend_toolkit_install.info": text})
        put(root, {f"{base}/latest": Link(version)})  # type: ignore[dict-item]
    else:
        put(root, {f"{base}/aarch64-linux/ascend_toolkit_install.info": text})


def boards_for(npus: list[FakeNpu]) -> dict[str, str]:
    out = {}
    for n in npus:
        out[f"info -t board -i {n.npu_id}"] = npu_smi_board(n)
        out[f"info -t health -i {n.npu_id}"] = (
            "\tHealth Status                  : OK\n\tError Code                     : NA\n"
        )
    return out


def three_ten_p_node(root: Path, functions: list[str], davinci: int) -> None:
    """A healthy node whose NPU functions are Atlas 300I Duo cards (d500 / 0110, 2 chips each)."""
    healthy_910b_node(root)
    for bdf in NPU_BDFS:
        drop(root, f"/sys/bus/pci/devices/{bdf}")
    spec: dict[str, Any] = {}
    for i, bdf in enumerate(functions):
        spec.update(
            _pci_function(
                "pci0000:00",
                f"0000:00:{i + 8:02x}.0",
                bdf,
                port_link=("8.0 GT/s PCIe", 16),
                vendor="0x19e5",
                device="0xd500",
                **{"class": "0x120000"},
                subsystem_vendor="0x0200",
                subsystem_device="0x0110",
                numa_node=0,
                local_cpulist="0-95",
                current_link_speed="8.0 GT/s PCIe",
                current_link_width=16,
                max_link_speed="8.0 GT/s PCIe",
                max_link_width=16,
            )
        )
    spec["/sys/bus/pci/drivers/devdrv_device_driver"] = DIR
    write_tree(root, spec)
    for i in range(8):
        drop(root, f"/dev/davinci{i}")
    for i in range(davinci):
        put(root, {f"/dev/davinci{i}": ""})


# --------------------------------------------------------------------------- scenarios

NPU_SMI = "field/npu_smi/"
VERS = "field/versions/"
DCMI_8005 = (
    NPU_SMI + "npu-smi_dcmi_init_failed_-8005_container_single_davinci7_vllm-ascend-v0.10.0rc1_"
    "vllm-ascend-2698.txt"
)
BOARD_910B2C = (
    NPU_SMI
    + "npu-smi_info_-t_board_-i_2_910B2C_IT21HMDB02-B2_25.2.0_fw7.7.0.6.236_e2e-report.partial.txt"
)
BOARD_DUO = (
    NPU_SMI
    + "npu-smi_info_-t_board_310P3_Atlas300IDuo_npu2944_25.5.1_fw7.8.0.6.201_SlotID_NA_go-test.txt"
)
BOARD_TELEGRAF = (
    NPU_SMI + "npu-smi_info_-t_board_910B_IT21HMDC_Bin5_D802_25.5.1_fw7.8.0.6.201_telegraf-test.txt"
)
INFO_6063 = (
    NPU_SMI + "npu-smi_info_container_310P3_8chip_ids0_96_32768_32896_25.3.rc1_vllm-ascend-6063.txt"
)
INFO_ID5 = "npu_smi_info/910B4_1npu_id5_25.5.2_noproc_container.txt"
DRV_2413 = (
    VERS + "driver_version_info_24.1.rc3_C19SPC001B124_cat-n_numbered_2x910_vllm-ascend-451.txt"
)
DRV_2531 = (
    VERS + "driver_version_info_25.3.rc1_C23SPC002B212_and_opp_version_info_8.5.0.2.220_"
    "indented_pypto-faq.txt"
)
TK_ALPHA = (
    VERS + "ascend_toolkit_install_info_8.0.RC3.alpha001_C77B220SPC008_aarch64_910B2_"
    "vllm-ascend-4284.txt"
)
TK_800 = "version_files/cann_ascend_toolkit_install_info_8.0.0_aarch64_vllm-ascend-312.txt"
TK_850 = "version_files/cann_toolkit_install_info_8.5.0_aarch64_newpath_cann_mind-cluster-doc.txt"
DRV_2411 = "version_files/driver_version_info_24.1.rc1_mind-cluster-doc.txt"
FW_7111 = "version_files/firmware_version_info_7.1.0.11.220_mind-cluster-doc.txt"


def _dcmi_8005(tmp: Path) -> Node:
    root = tmp / "root"
    healthy_910b_node(root)
    as_container(root, (7,))
    drop(root, FIRMWARE_FILE)  # the docker run mounts the driver's version.info, not firmware's
    out = real(DCMI_8005)
    return Node(root, {"*": {"stdout": out, "rc": 0}})


def _board_910b2c(tmp: Path) -> Node:
    root = tmp / "root"
    healthy_910b_node(root)
    as_container(root, (2,))
    no_version_files(root)
    npu = FakeNpu(2, NPU_BDFS[2].upper(), name="910B2C", software="25.2.0", firmware="7.7.0.6.236")
    answers = boards_for([npu])
    answers["info"] = npu_smi_info([npu], "25.2.0")
    answers["info -t board -i 2"] = real(BOARD_910B2C)
    return Node(root, answers)


def _duo(tmp: Path) -> Node:
    root = tmp / "root"
    three_ten_p_node(root, ["0000:0c:00.0"], davinci=2)
    drop(root, FIRMWARE_FILE)
    put(root, {DRIVER_FILE: real(DRV_2531).split("\n\n")[0].replace("25.3.rc1", "25.5.1")})
    answers: dict[str, Any] = {
        "info": npu_smi_info_310p([(2944, "0000:0C:00.0", [(0, 0, 1705), (1, 1, 1242)])], "25.5.1"),
        "info -t board -i 2944": real(BOARD_DUO),
        "*": {"stdout": "\tHealth Status                  : OK\n"},
    }
    return Node(root, answers)


def _telegraf(tmp: Path) -> Node:
    root = tmp / "root"
    healthy_910b_node(root)
    drop(root, FIRMWARE_FILE)
    put(root, {DRIVER_FILE: real(DRV_2531).split("\n\n")[0].replace("25.3.rc1", "25.5.1")})
    npus = [
        FakeNpu(i, bdf.upper(), software="25.5.1", firmware="7.8.0.6.201")
        for i, bdf in enumerate(NPU_BDFS)
    ]
    answers: dict[str, Any] = dict(npu_smi_outputs(npus, "25.5.1"))
    answers["info -t board -i 0"] = real(BOARD_TELEGRAF)
    set_toolkit(root, real(TK_850), "8.5.0", "/usr/local/Ascend/cann")
    return Node(root, answers)


def _foreign_6063(tmp: Path) -> Node:
    root = tmp / "root"
    three_ten_p_node(root, ["0000:01:00.0", "0000:03:00.0", "0000:81:00.0", "0000:84:00.0"], 8)
    put(root, {"/.dockerenv": ""})
    no_version_files(root)
    answers: dict[str, Any] = {"info": real(INFO_6063)}
    for npu, bus in (
        (0, "0000:01:00.0"),
        (96, "0000:03:00.0"),
        (32768, "0000:81:00.0"),
        (32896, "0000:84:00.0"),
    ):
        answers[f"info -t board -i {npu}"] = npu_smi_board_310p(npu, bus, "25.3.rc1", "7.8.0.6.201")
    answers["*"] = {"stdout": "\tHealth Status                  : OK\n"}
    return Node(root, answers, env={"ASCEND_VISIBLE_DEVICES": "4,5"})


def _id5(tmp: Path) -> Node:
    root = tmp / "root"
    healthy_910b_node(root)
    as_container(root, (5,))
    no_version_files(root)
    npu = FakeNpu(5, NPU_BDFS[5].upper(), name="910B4", software="25.5.2", firmware="7.8.0.6.201")
    answers = boards_for([npu])
    answers["info"] = real(INFO_ID5)
    return Node(root, answers)


def _mismatch(tmp: Path) -> Node:
    root = tmp / "root"
    healthy_910b_node(root)
    put(root, {DRIVER_FILE: real(DRV_2411), FIRMWARE_FILE: real(FW_7111)})
    npus = [
        FakeNpu(i, bdf.upper(), software="24.1.rc1", firmware="7.1.0.11.220")
        for i, bdf in enumerate(NPU_BDFS)
    ]
    return Node(root, dict(npu_smi_outputs(npus, "24.1.rc1")))


def _catn_2413(tmp: Path) -> Node:
    root = tmp / "root"
    healthy_910b_node(root)
    drop(root, FIRMWARE_FILE)
    put(root, {DRIVER_FILE: real(DRV_2413)})
    set_toolkit(root, real(TK_800), "8.0.0")
    npus = [FakeNpu(i, bdf.upper()) for i, bdf in enumerate(NPU_BDFS)]
    return Node(root, dict(npu_smi_outputs(npus, "24.1.rc3")))


def _alpha(tmp: Path) -> Node:
    root = tmp / "root"
    healthy_910b_node(root)
    as_container(root, tuple(range(8)))
    no_version_files(root)
    set_toolkit(root, real(TK_ALPHA), "8.0.RC3.alpha001")
    npus = [
        FakeNpu(i, bdf.upper(), name="910B2", software="25.2.0", firmware="7.7.0.6.236")
        for i, bdf in enumerate(NPU_BDFS)
    ]
    return Node(root, dict(npu_smi_outputs(npus, "25.2.0")))


def _partial_install(tmp: Path) -> Node:
    root = tmp / "root"
    healthy_910b_node(root)  # its /etc/ascend_install.info has no Driver_Install_Status=complete
    npus = [FakeNpu(i, bdf.upper()) for i, bdf in enumerate(NPU_BDFS)]
    answers: dict[str, Any] = dict(npu_smi_outputs(npus))
    warning = (
        "[WARNING]The driver package may not be completely installed, which may cause function "
        "abnormal. Please reinstall it.\n"
    )
    answers["info"] = warning + answers["info"]
    return Node(root, answers)


def _compat_nok(tmp: Path) -> Node:
    root = tmp / "root"
    healthy_910b_node(root)
    npus = [FakeNpu(i, bdf.upper()) for i, bdf in enumerate(NPU_BDFS)]
    answers: dict[str, Any] = dict(npu_smi_outputs(npus))
    answers["info -t board -i 3"] = npu_smi_board(npus[3]).replace(
        "Compatibility                  : OK", "Compatibility                  : NOK"
    )
    return Node(root, answers)


def _fw_na(tmp: Path) -> Node:
    root = tmp / "root"
    healthy_910b_node(root)
    as_container(root, tuple(range(8)))
    no_version_files(root)
    npus = [FakeNpu(i, bdf.upper(), firmware="NA", software="NA") for i, bdf in enumerate(NPU_BDFS)]
    return Node(root, dict(npu_smi_outputs(npus)))


def _soc_310b(tmp: Path) -> Node:
    root = tmp / "root"
    healthy_910b_node(root)
    for bdf in NPU_BDFS:  # an Atlas 200I A2 / 500 A2: the 310B is a SoC, no PCI function
        drop(root, f"/sys/bus/pci/devices/{bdf}")
    for i in range(1, 8):
        drop(root, f"/dev/davinci{i}")
    npu = FakeNpu(0, "NA", name="310B4", hbm_total=0)
    answers = boards_for([npu])
    answers["info"] = npu_smi_info([npu], "23.0.0")
    return Node(root, answers)


OK = ("PASS",)
NOT_FAIL = ("PASS", "WARN")
SCENARIOS: tuple[Scenario, ...] = (
    Scenario(
        "dcmi-8005-container-davinci7",
        (DCMI_8005,),
        _dcmi_8005,
        {"DRV-NPU-001": (("FAIL",), "-8005")},
        ("NOT_READY",),
    ),
    Scenario(
        "container-npu2-910B2C-no-version-info",
        (BOARD_910B2C,),
        _board_910b2c,
        {"DRV-NPU-001": (OK, ""), "DRV-VER-001": (OK, "board"), "DRV-DEV-001": (OK, "")},
    ),
    Scenario(
        "atlas-300I-duo-npu2944-two-chips-one-bus",
        (BOARD_DUO, DRV_2531),
        _duo,
        {"DRV-NPU-001": (OK, ""), "DRV-VER-001": (OK, "")},
    ),
    Scenario(
        "910B-8npu-indented-board-no-firmware-file",
        (BOARD_TELEGRAF, DRV_2531, TK_850),
        _telegraf,
        {"DRV-NPU-001": (OK, ""), "DRV-VER-001": (OK, "board")},
    ),
    Scenario(
        "container-310P-8chips-foreign-processes-on-npu0",
        (INFO_6063,),
        _foreign_6063,
        {"DRV-NPU-001": (OK, ""), "DRV-NPU-003": (("FAIL",), "326429")},
        ("NOT_READY",),
    ),
    Scenario(
        "container-one-npu-id5",
        (INFO_ID5,),
        _id5,
        {"DRV-NPU-001": (OK, ""), "DRV-DEV-001": (OK, ""), "DRV-VER-001": (OK, "board")},
    ),
    Scenario(
        "driver-24.1.rc1-firmware-7.1.0.11-refuse-each-other",
        (DRV_2411, FW_7111),
        _mismatch,
        {"DRV-VER-001": (("FAIL",), "do not accept")},
        ("NOT_READY",),
    ),
    Scenario(
        "driver-24.1.rc3-cat-n-toolkit-8.0.0",
        (DRV_2413, TK_800),
        _catn_2413,
        {"DRV-VER-001": (OK, ""), "DRV-VER-002": (OK, "")},
    ),
    Scenario(
        "driver-25.5.1-indented-cann-8.5.0",
        (DRV_2531, TK_850),
        _telegraf,
        {"DRV-VER-002": (OK, "")},
    ),
    Scenario(
        "container-toolkit-8.0.RC3.alpha001-driver-25.2.0",
        (TK_ALPHA,),
        _alpha,
        {"DRV-VER-002": (("WARN",), "alpha")},
    ),
    Scenario(
        "310B-soc-without-pci-function",
        (),
        _soc_310b,
        {"DRV-NPU-001": (OK, "")},
    ),
    Scenario(
        "partial-install-npu-smi-warning",
        (),
        _partial_install,
        {"DRV-NPU-001": (("FAIL",), "not be completely installed")},
        ("NOT_READY",),
    ),
    Scenario(
        "board-compatibility-NOK-on-npu3",
        (),
        _compat_nok,
        {"DRV-VER-001": (("FAIL",), "NOK")},
        ("NOT_READY",),
    ),
    Scenario(
        "container-firmware-NA-on-every-npu",
        (),
        _fw_na,
        {"DRV-VER-001": (("WARN", "ERROR", "FAIL"), "NA")},
    ),
)


def build(s: Scenario, tmp: Path) -> tuple[Node, Path]:
    """Write the scenario's node and its stand-in npu-smi; returns the node and the bin dir."""
    node = s.build(tmp)
    bindir = tmp / "bin"
    standin(bindir, "npu-smi", node.answers)
    return node, bindir


def audit(s: Scenario, tmp: Path) -> Any:
    """The driver layer's Report on the scenario's node, run in-process."""
    from ascend_audit.context import Context, Inputs
    from ascend_audit.engine import Selection, run_audit
    from ascend_audit.host.live import LiveHost
    from ascend_audit.inventory import build_inventory
    from ascend_audit.policy import parse_policy
    from ascend_audit.registry import load_registry

    node, bindir = build(s, tmp)
    env = dict(os.environ, PATH=f"{bindir}:/usr/bin:/bin", **node.env)
    host = LiveHost(str(node.root), timeout=5.0, environ=env)
    ctx = Context(host, parse_policy(node.policy), Inputs())
    sel = Selection(layers=("driver",), gate=False)
    return run_audit(load_registry(entry_points=False), ctx, sel, inventory=build_inventory)


def judge(s: Scenario, report: Any) -> list[str]:
    """What the report got wrong against the scenario's sources (empty: all right)."""
    wrong = []
    by_id = {r.id: r for r in report.results}
    for cid, (statuses, needle) in s.expected.items():
        r = by_id.get(cid)
        if r is None:
            wrong.append(f"{cid}: not run (expected {'/'.join(statuses)})")
            continue
        status = r.status.value
        if status not in statuses or (needle and needle.lower() not in r.summary.lower()):
            want = "/".join(statuses) + (f" mentioning {needle!r}" if needle else "")
            wrong.append(f"{cid}: {status} ({r.summary[:160]}); expected {want}")
    if s.layer:
        verdict = next(lay.verdict.value for lay in report.layers if lay.name == "driver")
        if verdict not in s.layer:
            wrong.append(f"driver layer: {verdict}; expected {'/'.join(s.layer)}")
    return wrong
