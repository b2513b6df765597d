"""DRV-VER-001 (driver/firmware parity) and DRV-VER-002 (CANN/driver): every verdict, real files."""

from __future__ import annotations

from pathlib import Path
from typing import TypeVar

import pytest
from shared_fixtures import DATA, fixture_cases, read_fixture
from standins import node_env, run_node, standin

from ascend_audit.context import Context
from ascend_audit.facts.keys import FactKey
from ascend_audit.facts.npu_details import NPU_BOARDS
from ascend_audit.facts.version_files import VERSION_FILES
from ascend_audit.facts.versions import split_dump_sections
from ascend_audit.host.live import LiveHost
from ascend_audit.model import Status
from ascend_audit.policy import parse_policy

T = TypeVar("T")

TABLE = (DATA / "driver" / "npu_smi_info_910b3_8npu.txt").read_text()
DRIVER = "/usr/local/Ascend/driver/version.info"
FIRMWARE = "/usr/local/Ascend/firmware/version.info"
TOOLKIT = "/usr/local/Ascend/ascend-toolkit/latest/{arch}-linux/ascend_toolkit_install.info"
CANN85 = "/usr/local/Ascend/cann/{arch}-linux/ascend_toolkit_install.info"
NNAE = "/usr/local/Ascend/nnae/latest/ascend_nnae_install.info"
FAMILIES = "[V100R001C15],[V100R001C17],[V100R001C18],[V100R001C19],[V100R001C20],[V100R001C21]"


def driver_info(
    version: str = "24.1.rc3",
    inner: str = "V100R001C19SPC002B224",
    fw_range: str | None = "[7.0.0,7.5.99]",
    package: str | None = None,
) -> str:
    """A driver version.info in the installed format."""
    text = (
        f"Version={version}\nascendhal_version=7.35.23\naicpu_version=1.0\ntdt_version=1.0\n"
        "log_version=1.0\nprof_version=2.0\ndvppkernels_version=1.1\ntsfw_version=1.0\n"
        f"Innerversion={inner}\ncompatible_version=[V100R001C30],[V100R001C13],{FAMILIES}\n"
    )
    if fw_range:
        text += f"compatible_version_fw={fw_range}\n"
    return text + (f"package_version={package}\n" if package else "")


def firmware_info(
    version: str = "7.5.0.1.129",
    package: str = "24.1.rc3",
    drv: str | None = "[23.0.0,23.0.0.],[24.0,24.0.],[24.1,24.1.]",
) -> str:
    text = f"Version={version}\nfirmware_version=1.0\npackage_version={package}\n"
    return text + (f"compatible_version_drv={drv}\n" if drv else "")


def toolkit_info(version: str, inner: str, families: str = FAMILIES, arch: str = "aarch64") -> str:
    return (
        f"package_name=Ascend-cann-toolkit\nversion={version}\ninnerversion={inner}\n"
        f"compatible_version={families}\narch={arch}\nos=linux\n"
        f"path=/usr/local/Ascend/ascend-toolkit/{version}/{arch}-linux\n"
    )


def board(npu: int, software: str = "24.1.rc3", firmware: str = "7.5.0.1.129") -> str:
    rows = [
        ("NPU ID", str(npu)),
        ("Software Version", software),
        ("Firmware Version", firmware),
        ("Compatibility", "OK"),
        ("Board ID", "0x64"),
        ("PCIe Bus Info", f"0000:{npu + 1:02X}:00.0"),
        ("PCI Vendor ID", "0x19E5"),
        ("PCI Device ID", "0xD802"),
        ("Chip Count", "1"),
    ]
    return "".join(f"{k:<31}: {v}\n" for k, v in rows)


def write(root: Path, files: dict[str, str]) -> None:
    for node_path, text in files.items():
        p = root / node_path.lstrip("/")
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text)


def healthy_files() -> dict[str, str]:
    return {
        DRIVER: driver_info(),
        FIRMWARE: firmware_info(),
        TOOLKIT.format(arch="aarch64"): toolkit_info("8.2.RC1", "V100R001C21SPC001B100"),
    }


def npu_smi(boards: dict[int, str | dict] | None = None) -> dict:
    out: dict[str, str | dict] = {"info": TABLE}
    for i in range(8):
        out[f"info -t board -i {i}"] = (boards or {}).get(i, board(i))
        out[f"info -t health -i {i}"] = "Health Status                  : OK\n"
    return out


def judge(tmp_path: Path, check: str, files: dict[str, str], smi: dict | None = None, policy=""):
    root, bindir = tmp_path / "root", tmp_path / "bin"
    root.mkdir(exist_ok=True)
    write(root, files)
    standin(bindir, "npu-smi", npu_smi() if smi is None else smi)
    report = run_node(root, bindir, policy, only=[check])
    return report.result(check), report


def gather(tmp_path: Path, key: FactKey[T], smi: dict | None = None) -> T:
    """One fact from a tmp sysroot with a stand-in npu-smi, without running checks."""
    bindir = tmp_path / "bin"
    standin(bindir, "npu-smi", npu_smi() if smi is None else smi)
    host = LiveHost(str(tmp_path / "root"), timeout=5.0, environ=node_env(bindir))
    return Context(host, parse_policy("")).fact(key)


# --------------------------------------------------------------------------- DRV-VER-001


def test_matched_driver_and_firmware_pass(tmp_path):
    r, report = judge(tmp_path, "DRV-VER-001", healthy_files())
    assert r.status is Status.PASS, r.summary
    assert "accept each other" in r.summary and "every NPU runs firmware 7.5.0.1.129" in r.summary
    versions = report.inventory["versions"]
    assert versions["driver"] == "24.1.rc3" and versions["firmware"] == "7.5.0.1.129"
    assert versions["cann"] == "8.2.RC1"
    assert versions["npus"]["3"] == {"firmware": "7.5.0.1.129", "software": "24.1.rc3"}


def test_real_driver_and_firmware_files_reject_each_other(tmp_path):
    files = {
        DRIVER: read_fixture("version_files/driver_version_info_24.1.rc1_mind-cluster-doc.txt"),
        FIRMWARE: read_fixture(
            "version_files/firmware_version_info_7.1.0.11.220_mind-cluster-doc.txt"
        ),
    }
    smi = npu_smi({i: board(i, "24.1.rc1", "7.1.0.11.220") for i in range(8)})
    r, _ = judge(tmp_path, "DRV-VER-001", files, smi)
    assert r.status is Status.FAIL
    assert "driver 24.1.rc1 / firmware 7.1.0.11.220 do not accept each other" in r.summary
    assert "outside firmware range" in r.summary
    assert {e.source for e in r.evidence} >= {DRIVER, FIRMWARE}


def test_same_package_is_accepted_with_a_note(tmp_path):
    dump = dict(
        split_dump_sections(
            read_fixture(
                "version_files/npu_info_before_envcheck_fixture_mind-cluster-faultdiag.txt"
            )
        )
    )
    files = {DRIVER: dump[DRIVER], FIRMWARE: dump[FIRMWARE]}
    smi = npu_smi({i: board(i, "23.0.7", "7.1.0.11.220") for i in range(8)})
    r, _ = judge(tmp_path, "DRV-VER-001", files, smi)
    assert r.status is Status.PASS, r.summary
    assert "same package 23.0.7" in r.summary


def test_missing_driver_file_on_a_host_fails(tmp_path):
    files = healthy_files()
    del files[DRIVER]
    r, _ = judge(tmp_path, "DRV-VER-001", files)
    assert r.status is Status.FAIL
    assert f"driver not installed: {DRIVER} does not exist" in r.summary


def test_missing_firmware_file_is_covered_by_what_the_boards_run(tmp_path):
    files = healthy_files()
    del files[FIRMWARE]
    r, _ = judge(tmp_path, "DRV-VER-001", files)
    assert r.status is Status.PASS, r.summary
    assert "npu-smi info -t board" in r.summary and f"{FIRMWARE} is not present" in r.summary
    assert "accepts running firmware 7.5.0.1.129" in r.summary


def test_missing_firmware_file_and_no_board_fails_on_a_host(tmp_path):
    files = healthy_files()
    del files[FIRMWARE]
    r, _ = judge(tmp_path, "DRV-VER-001", files, {"info": npu_smi()["info"]})
    assert r.status is Status.FAIL
    assert f"firmware file missing: {FIRMWARE} does not exist" in r.summary


def test_unreadable_version_file_is_error(tmp_path):
    files = healthy_files()
    del files[DRIVER]
    (tmp_path / "root" / DRIVER.lstrip("/")).mkdir(parents=True)
    r, _ = judge(tmp_path, "DRV-VER-001", files)
    assert r.status is Status.ERROR
    assert f"cannot read {DRIVER}" in r.summary


def test_version_file_without_version_line_is_error(tmp_path):
    files = healthy_files()
    files[DRIVER] = "\x00\x01garbage\xff\n"
    r, _ = judge(tmp_path, "DRV-VER-001", files)
    assert r.status is Status.ERROR
    assert "has no Version= line" in r.summary


def test_unstated_compatibility_warns(tmp_path):
    files = healthy_files()
    files[DRIVER] = driver_info(fw_range=None)
    files[FIRMWARE] = firmware_info(package="24.1.rc2", drv=None)
    r, _ = judge(tmp_path, "DRV-VER-001", files)
    assert r.status is Status.WARN
    assert "compatibility not stated" in r.summary


def test_npus_on_different_firmware_fail_listing_them(tmp_path):
    smi = npu_smi({2: board(2, firmware="7.3.0.1.231"), 5: board(5, firmware="7.3.0.1.231")})
    r, _ = judge(tmp_path, "DRV-VER-001", healthy_files(), smi)
    assert r.status is Status.FAIL
    assert "NPUs run different firmware" in r.summary
    assert (
        "7.3.0.1.231 on NPU 2, 5" in r.summary
        and "7.5.0.1.129 on NPU 0, 1, 3, 4, 6, 7" in r.summary
    )


def test_running_firmware_other_than_installed_fails(tmp_path):
    smi = npu_smi({i: board(i, firmware="7.3.0.1.231") for i in range(8)})
    r, _ = judge(tmp_path, "DRV-VER-001", healthy_files(), smi)
    assert r.status is Status.FAIL
    assert "NPUs run firmware 7.3.0.1.231 but 7.5.0.1.129 is installed" in r.summary
    assert "power-cycle" in r.summary


def test_running_driver_other_than_installed_fails(tmp_path):
    smi = npu_smi({i: board(i, software="24.1.rc2") for i in range(8)})
    r, _ = judge(tmp_path, "DRV-VER-001", healthy_files(), smi)
    assert r.status is Status.FAIL
    assert "NPUs run driver (Software Version) 24.1.rc2 but 24.1.rc3 is installed" in r.summary


def test_board_query_exit_255_fails(tmp_path):
    invalid = "Invalid card id.\nError parameter of -i\nUsage: npu-smi info <watch|proc|-h|-m>\n"
    smi = npu_smi({4: {"stdout": invalid, "rc": 255}})
    r, _ = judge(tmp_path, "DRV-VER-001", healthy_files(), smi)
    assert r.status is Status.FAIL
    assert "NPU 4 board query failed" in r.summary and "exited 255" in r.summary


@pytest.mark.parametrize(
    "garbage",
    ["", "\x00\xff\xfe\x01" * 64, "Invalid card id.\n"],
    ids=["empty", "binary", "message"],
)
def test_unreadable_board_output_is_error(tmp_path, garbage):
    r, _ = judge(tmp_path, "DRV-VER-001", healthy_files(), npu_smi({1: garbage}))
    assert r.status is Status.ERROR
    assert "NPU 1 board info unreadable" in r.summary
    assert any(e.source == "npu-smi info -t board -i 1" for e in r.evidence)


def test_no_npu_smi_still_judges_the_files(tmp_path):
    r, _ = judge(tmp_path, "DRV-VER-001", healthy_files(), {"info": {"stdout": "", "rc": 255}})
    assert r.status is Status.PASS
    assert "per-NPU versions not read" in r.summary


@pytest.mark.parametrize(
    ("policy", "status", "words"),
    [
        ('[driver]\nexpected_driver_version = "24.1.RC3"\n', Status.PASS, ""),
        (
            '[driver]\nexpected_driver_version = "25.0.rc1"\n',
            Status.FAIL,
            "driver 24.1.rc3 installed, policy expects 25.0.rc1",
        ),
        (
            '[driver]\nexpected_firmware_version = "7.7.0.1.238"\n',
            Status.FAIL,
            "firmware 7.5.0.1.129 installed, policy expects 7.7.0.1.238",
        ),
    ],
)
def test_policy_expected_versions(tmp_path, policy, status, words):
    r, _ = judge(tmp_path, "DRV-VER-001", healthy_files(), policy=policy)
    assert r.status is status, r.summary
    assert words in r.summary


def test_driver_install_path_param_relocates_the_driver(tmp_path):
    files = healthy_files()
    del files[DRIVER]
    files["/opt/Ascend/driver/version.info"] = driver_info()
    files["/etc/ascend_install.info"] = (
        "UserName=HwHiAiUser\nUserGroup=HwHiAiUser\nFirmware_Install_Type=full\n"
        "Firmware_Install_Path_Param=/usr/local/Ascend\nDriver_Install_Type=full\n"
        "Driver_Install_Path_Param=/opt/Ascend\nDriver_Install_For_All=yes\n"
    )
    r, _ = judge(tmp_path, "DRV-VER-001", files)
    assert r.status is Status.PASS, r.summary
    assert "/opt/Ascend/driver/version.info" in {e.source for e in r.evidence}


@pytest.mark.parametrize("path", fixture_cases("npu_smi_board", "board_*.txt"))
def test_real_board_outputs_are_read(tmp_path, path):
    text = path.read_text(errors="replace")
    boards = gather(tmp_path, NPU_BOARDS, {"info": TABLE, "*": text})
    assert len(boards.boards) == 8 and all(b.readable for b in boards.boards)
    fw = set(boards.firmware_versions().values())
    assert fw == ({"7.1.0.7.220"} if "7.1.0.7.220" in text else set())  # 'xxx' is no version


def test_real_board_fixture_against_installed_firmware(tmp_path):
    text = read_fixture(
        "npu_smi_board/board_-t_board_npu0_sw23.0.5_fw7.1.0.7.220_mind-cluster-doc.txt"
    )
    files = {
        DRIVER: driver_info("23.0.5", fw_range="[7.0.0,7.1.99]"),
        FIRMWARE: firmware_info("7.1.0.11.220", "23.0.5", "[23.0.0,23.0.0.]"),
    }
    r, _ = judge(tmp_path, "DRV-VER-001", files, {"info": TABLE, "*": text})
    assert r.status is Status.FAIL
    assert "NPUs run firmware 7.1.0.7.220 but 7.1.0.11.220 is installed" in r.summary


# --------------------------------------------------------------------------- DRV-VER-002


def cann85_files(arch: str = "aarch64") -> dict[str, str]:
    return {
        DRIVER: driver_info("25.5.1", "V100R001C23SPC001B201", "[7.0.0,7.8.99]"),
        FIRMWARE: firmware_info("7.8.0.2.212", "25.5.1", "[25.5,25.5.]"),
        CANN85.format(arch=arch): read_fixture(
            "version_files/cann_toolkit_install_info_8.5.0_aarch64_newpath_cann_mind-cluster-doc.txt"
        ).replace("aarch64", arch),
    }


@pytest.mark.parametrize("arch", ["aarch64", "x86_64"])
def test_cann_in_the_table_and_families_passes(tmp_path, arch):
    r, report = judge(tmp_path, "DRV-VER-002", cann85_files(arch))
    assert r.status is Status.PASS, r.summary
    assert "CANN 8.5.0" in r.summary and "listed as compatible" in r.summary
    assert report.inventory["versions"]["cann"] == "8.5.0"


def test_toolkit_family_without_the_driver_fails(tmp_path):
    files = {
        DRIVER: driver_info("23.0.7", "V100R001C13SPC012B220"),
        FIRMWARE: firmware_info(),
        TOOLKIT.format(arch="aarch64"): read_fixture(
            "version_files/cann_ascend_toolkit_install_info_8.1.RC1_aarch64_vllm-ascend-901.txt"
        ),
    }
    r, _ = judge(tmp_path, "DRV-VER-002", files)
    assert r.status is Status.FAIL
    assert "CANN 8.1.RC1 does not support this driver" in r.summary
    assert "below the documented minimum" not in r.summary  # MindSDK's minimum: no MindSDK here


def test_known_bad_pair_in_the_table_fails(tmp_path):
    files = {
        DRIVER: driver_info("25.0.1", "V100R001C21SPC001B100"),
        FIRMWARE: firmware_info(),
        TOOLKIT.format(arch="x86_64"): toolkit_info(
            "9.2.0", "V100R001C27SPC001B001", arch="x86_64"
        ),
    }
    r, _ = judge(tmp_path, "DRV-VER-002", files)
    assert r.status is Status.FAIL
    assert "CANN 9.2.0 with driver 25.0.1: listed as incompatible" in r.summary


def test_pair_not_in_the_table_but_accepted_by_the_toolkit_family_passes(tmp_path):
    files = healthy_files()
    files[TOOLKIT.format(arch="aarch64")] = read_fixture(
        "version_files/cann_ascend_toolkit_install_info_8.0.0_aarch64_vllm-ascend-312.txt"
    )
    r, _ = judge(tmp_path, "DRV-VER-002", files)
    assert r.status is Status.PASS, r.summary
    assert "is not in the table of version" in r.summary and "the toolkit accepts it" in r.summary


def test_pair_not_in_the_table_warns_naming_the_table_version(tmp_path):
    files = healthy_files()
    text = read_fixture(
        "version_files/cann_ascend_toolkit_install_info_8.0.0_aarch64_vllm-ascend-312.txt"
    )
    files[TOOLKIT.format(arch="aarch64")] = "\n".join(
        ln for ln in text.splitlines() if not ln.startswith("compatible_version")
    )
    r, _ = judge(tmp_path, "DRV-VER-002", files)
    assert r.status is Status.WARN
    assert "CANN 8.0.0 with driver 24.1.rc3 is not in the table of version" in r.summary


def test_no_toolkit_warns_about_the_serving_image(tmp_path):
    files = {DRIVER: driver_info(), FIRMWARE: firmware_info()}
    r, _ = judge(tmp_path, "DRV-VER-002", files)
    assert r.status is Status.WARN
    assert "no CANN toolkit installed" in r.summary and "serving image" in r.summary
    assert r.evidence


def test_nnae_stands_in_for_a_missing_toolkit(tmp_path):
    files = cann85_files()
    files[NNAE] = files.pop(CANN85.format(arch="aarch64")).replace("toolkit", "nnae")
    r, _ = judge(tmp_path, "DRV-VER-002", files)
    assert r.status is Status.PASS, r.summary
    assert NNAE in r.summary


def test_missing_driver_cannot_be_judged(tmp_path):
    files = cann85_files()
    del files[DRIVER]
    r, _ = judge(tmp_path, "DRV-VER-002", files, {"*": {"stdout": "", "rc": 1}})
    assert r.status is Status.ERROR
    assert "cannot judge CANN against the driver" in r.summary


def test_missing_driver_file_is_judged_on_what_npu_smi_runs(tmp_path):
    files = cann85_files()
    del files[DRIVER]
    r, _ = judge(tmp_path, "DRV-VER-002", files)
    # the boards say 24.1.rc3; without version.info its family is unknown, and the pair is not
    # in the table: a warning, not an ERROR
    assert r.status is Status.WARN and r.metrics["driver"] == "24.1.rc3", r.summary
    assert "CANN 8.5.0 with driver 24.1.rc3 is not in the table" in r.summary


@pytest.mark.parametrize(("want", "status"), [("8.5.0", Status.PASS), ("8.2.RC1", Status.FAIL)])
def test_policy_expected_cann_version(tmp_path, want, status):
    policy = f'[driver]\nexpected_cann_version = "{want}"\n'
    r, _ = judge(tmp_path, "DRV-VER-002", cann85_files(), policy=policy)
    assert r.status is status, r.summary
    if status is Status.FAIL:
        assert "CANN 8.5.0 installed, policy expects 8.2.RC1" in r.summary


@pytest.mark.parametrize("path", fixture_cases("version_files", "cann_*.txt"))
def test_real_toolkit_files_are_found_at_their_layout(tmp_path, path):
    text = path.read_text(errors="replace")
    arch = "x86_64" if "arch=x86_64" in text else "aarch64"
    where = (CANN85 if "/cann-" in text else TOOLKIT).format(arch=arch)
    write(tmp_path / "root", {where: text, DRIVER: driver_info(), FIRMWARE: firmware_info()})
    vf = gather(tmp_path, VERSION_FILES)
    assert vf.toolkit is not None and vf.toolkit.path == where
    assert vf.cann_version and vf.cann_version in path.name
    assert vf.toolkit.parsed.layout == ("cann" if "/cann/" in where else "ascend-toolkit")


def test_both_layouts_present_the_newest_wins(tmp_path):
    files = cann85_files()
    files[TOOLKIT.format(arch="aarch64")] = toolkit_info("8.0.0", "V100R001C20SPC001B251")
    write(tmp_path / "root", files)
    vf = gather(tmp_path, VERSION_FILES)
    assert vf.cann_version == "8.5.0" and len(vf.toolkits) == 2


def test_a_pair_the_reference_lacks_is_judged_by_its_cited_project_row(tmp_path, monkeypatch):
    """A container without the driver's version.info: CANN 8.5.1 on driver 25.2.0 (from the
    boards). The reference tables do not list CANN 8.5.1; the project's row from the MindIE
    3.0.0 release note (8.5.1 takes 8.5.0's HDKs) does. Without that row the pair warns."""
    from ascend_audit.facts import compat

    files = {TOOLKIT.format(arch="aarch64"): toolkit_info("8.5.1", "V100R001C25SPC001B001")}
    (tmp_path / "with").mkdir()
    (tmp_path / "without").mkdir()
    smi = npu_smi({i: board(i, software="25.2.0", firmware="7.8.0.2.212") for i in range(8)})
    r, _ = judge(tmp_path / "with", "DRV-VER-002", files, smi)
    assert r.status is Status.PASS, r.summary
    assert "CANN 8.5.1 with driver 25.2.0 listed as compatible" in r.summary
    assert "a row the project added from https://gitcode.com/Ascend/release-management" in r.summary

    real = compat._load

    def reference_only(name: str):
        rows, problem = real(name)
        return tuple(x for x in rows if x.get("origin") != "project"), problem

    monkeypatch.setattr(compat, "_load", reference_only)
    r, _ = judge(tmp_path / "without", "DRV-VER-002", files, smi)
    assert r.status is Status.WARN
    assert "CANN 8.5.1 with driver 25.2.0 is not in the table of version" in r.summary
