"""Tests for the version-file parsers and the Ascend version comparisons."""

from __future__ import annotations

import json
import random
import re

import pytest
from shared_fixtures import fixture_files, read_fixture

from ascend_audit.facts.versions import (
    VersionRange,
    compare_versions,
    driver_accepts_firmware,
    driver_accepts_toolkit,
    driver_firmware_compatibility,
    firmware_accepts_driver,
    inner_family,
    parse_ascend_install_info,
    parse_driver_version_info,
    parse_firmware_version_info,
    parse_key_values,
    parse_toolkit_install_info,
    parse_version,
    split_dump_sections,
    toolkit_accepts_driver,
    version_in_range,
)

VF = "version_files/"
DRIVER = VF + "driver_version_info_24.1.rc1_mind-cluster-doc.txt"
FIRMWARE = VF + "firmware_version_info_7.1.0.11.220_mind-cluster-doc.txt"
ENVCHECK = VF + "npu_info_before_envcheck_fixture_mind-cluster-faultdiag.txt"

TOOLKITS = {
    "cann_ascend_toolkit_install_info_8.0.0_aarch64_vllm-ascend-312.txt": (
        "8.0.0",
        "V100R001C20SPC001B251",
        "aarch64",
        "/usr/local/Ascend/ascend-toolkit/8.0.0/aarch64-linux",
        "ascend-toolkit",
        ("V100R001C15", "V100R001C17", "V100R001C18", "V100R001C19", "V100R001C20"),
    ),
    "cann_ascend_toolkit_install_info_8.0.0_x86_64_vllm-ascend-264.txt": (
        "8.0.0",
        "V100R001C20SPC001B251",
        "x86_64",
        "/usr/local/Ascend/ascend-toolkit/8.0.0/x86_64-linux",
        "ascend-toolkit",
        ("V100R001C15", "V100R001C17", "V100R001C18", "V100R001C19", "V100R001C20"),
    ),
    "cann_ascend_toolkit_install_info_8.1.RC1_aarch64_vllm-ascend-901.txt": (
        "8.1.RC1",
        "V100R001C21SPC001B238",
        "aarch64",
        "/usr/local/Ascend/ascend-toolkit/8.1.RC1/aarch64-linux",
        "ascend-toolkit",
        ("V100R001C15", "V100R001C18", "V100R001C19", "V100R001C20", "V100R001C21"),
    ),
    "cann_toolkit_install_info_8.5.0_aarch64_newpath_cann_mind-cluster-doc.txt": (
        "8.5.0",
        "V100R001C25SPC001B212",
        "aarch64",
        "/usr/local/Ascend/cann-8.5.0/aarch64-linux",
        "cann",
        (
            "V100R001C15",
            "V100R001C18",
            "V100R001C19",
            "V100R001C20",
            "V100R001C21",
            "V100R001C23",
        ),
    ),
}


def test_every_version_fixture_is_covered() -> None:
    names = {p.name for p in fixture_files("version_files", "*.txt")}
    if not names:
        pytest.skip("../shared/fixtures/version_files is not beside this checkout")
    covered = {*TOOLKITS, DRIVER[len(VF) :], FIRMWARE[len(VF) :], ENVCHECK[len(VF) :]}
    assert names == covered


@pytest.mark.parametrize("name", sorted(TOOLKITS))
def test_toolkit_fixture(name: str) -> None:
    version, inner, arch, path, layout, compat = TOOLKITS[name]
    tk = parse_toolkit_install_info(read_fixture(VF + name))
    assert tk.problems == ()
    assert tk.package_name == "Ascend-cann-toolkit"
    assert tk.version == version
    assert tk.inner_version == inner
    assert tk.arch == arch
    assert tk.os == "linux"
    assert tk.path == path
    assert tk.layout == layout
    assert tuple(r.low for r in tk.compatible_inner) == compat
    assert all(r.low == r.high for r in tk.compatible_inner)
    json.dumps(tk.to_dict())


def test_toolkit_layout_from_where_it_was_read() -> None:
    text = "version=8.5.0\n"
    assert (
        parse_toolkit_install_info(text, "/usr/local/Ascend/cann/x86_64-linux/a.info").layout
        == "cann"
    )
    old = "/usr/local/Ascend/ascend-toolkit/latest/aarch64-linux/ascend_toolkit_install.info"
    tk = parse_toolkit_install_info(text, old)
    assert tk.layout == "ascend-toolkit"
    assert tk.arch == "aarch64"


def test_driver_fixture() -> None:
    d = parse_driver_version_info(read_fixture(DRIVER))
    assert d.problems == ()
    assert d.version == "24.1.rc1"
    assert d.inner_version == "V100R001C15SPC006B220"
    assert d.package_version is None
    assert [r.low for r in d.compatible_inner] == [
        "V100R001C30",
        "V100R001C13",
        "V100R001C15",
        "V100R001C17",
    ]
    assert d.compatible_firmware == (VersionRange("7.0.0", "7.2.99"),)
    assert dict(d.fields)["ascendhal_version"] == "7.35.19"
    json.dumps(d.to_dict())


def test_firmware_fixture() -> None:
    fw = parse_firmware_version_info(read_fixture(FIRMWARE))
    assert fw.problems == ()
    assert fw.version == "7.1.0.11.220"
    assert fw.package_version == "23.0.7"
    assert fw.firmware_version == "1.0"
    assert fw.compatible_driver == (
        VersionRange("23.0.rc3", "23.0.rc3."),
        VersionRange("23.0.0", "23.0.0."),
    )
    json.dumps(fw.to_dict())


def test_driver_and_firmware_fixtures_do_not_accept_each_other() -> None:
    d = parse_driver_version_info(read_fixture(DRIVER))
    fw = parse_firmware_version_info(read_fixture(FIRMWARE))
    # the driver's range [7.0.0,7.2.99] admits firmware 7.1.0.11.220 ...
    assert driver_accepts_firmware(d, fw).accepted is True
    # ... but the firmware only admits the 23.0.rc3 and 23.0.0 driver families, not 24.1.rc1
    back = firmware_accepts_driver(fw, d)
    assert back.accepted is False
    assert "24.1.rc1" in back.reason
    both = driver_firmware_compatibility(d, fw)
    assert both.accepted is False
    assert not both
    json.dumps(both.to_dict())


def _sections(path: str) -> dict[str, str]:
    return dict(split_dump_sections(read_fixture(path)))


def test_envcheck_dump() -> None:
    sec = _sections(ENVCHECK)
    d = parse_driver_version_info(sec["/usr/local/Ascend/driver/version.info"])
    fw = parse_firmware_version_info(sec["/usr/local/Ascend/firmware/version.info"])
    tk_path = "/usr/local/Ascend/ascend-toolkit/latest/aarch64-linux/ascend_toolkit_install.info"
    tk = parse_toolkit_install_info(sec[tk_path], tk_path)
    nnae = parse_toolkit_install_info(sec["/usr/local/Ascend/nnae/latest/ascend_nnae_install.info"])
    assert (d.version, d.inner_version, d.package_version) == (
        "23.0.7",
        "V100R001C15SPC012B220",
        "23.0.7",
    )
    assert d.compatible_firmware == (VersionRange("7.0.0", "7.1.99"),)
    assert d.problems == () and fw.problems == () and tk.problems == ()
    assert fw.version == "7.1.0.11.220"
    assert (tk.version, tk.inner_version, tk.layout) == (
        "7.0.T10",
        "V100R001C13B222",
        "ascend-toolkit",
    )
    assert nnae.package_name == "Ascend-cann-nnae"
    assert nnae.arch == "x86_64"
    assert nnae.layout == "nnae"
    assert nnae.compatible_inner[0] == VersionRange("V100R001C13", "V100R001C19")
    assert driver_accepts_firmware(d, fw).accepted is True
    # 23.0.7 is neither in the 23.0.rc3 nor in the 23.0.0 family the firmware names
    assert firmware_accepts_driver(fw, d).accepted is False
    # the 7.0.T10 toolkit names C29, C30, C13 and V100R003C10/C11: not the driver's C15
    assert toolkit_accepts_driver(tk, d).accepted is False
    # the driver names C13, the toolkit's own family
    assert driver_accepts_toolkit(d, tk).accepted is True
    # nnae names the range [C13,C19], which holds C15
    assert toolkit_accepts_driver(nnae, d).accepted is True


def test_after_fixture_dump_matches_envcheck() -> None:
    sec = _sections("node_dumps/ascend_mindcluster_npu_info_after_fixture.txt")
    d = parse_driver_version_info(sec["/usr/local/Ascend/driver/version.info"])
    assert d.version == "23.0.7"
    assert d.compatible_firmware == (VersionRange("7.0.0", "7.1.99"),)


def test_faultdiag_doc_dump_versions() -> None:
    text = read_fixture("node_dumps/ascend_npu-smi_outputs_faultdiag_doc.txt")
    assert "Version=24.1.rc1" in text
    start = text.index("Version=24.1.rc1")
    body = text[start : text.index("\n", text.index("compatible_version_fw"))]
    # this part of the dump is `grep -B4 -A22` output: each line carries a `1246-` prefix
    lines = [re.sub(r"^\d+[-:]", "", line) for line in body.splitlines()]
    d = parse_driver_version_info("\n".join(lines))
    assert d.problems == ()
    assert d.version == "24.1.rc1"
    assert d.compatible_firmware == (VersionRange("7.0.0", "7.2.99"),)


def test_ascend_install_info() -> None:
    sec = _sections("node_dumps/ascend_install_info_sample.txt")
    info = parse_ascend_install_info(sec["/etc/ascend_install.info"])
    assert info.problems == ()
    assert info.user_name == "HwHiAiUser"
    assert info.user_group == "HwHiAiUser"
    assert info.driver_install_path == "/usr/local/Ascend"
    assert info.firmware_install_path == "/usr/local/Ascend"
    assert info.driver_install_type == "full"
    assert info.firmware_install_type == "full"
    assert info.driver_install_for_all is True
    assert info.driver_install_mode is None
    json.dumps(info.to_dict())


def test_toolkits_accept_driver_24_1_rc1() -> None:
    d = parse_driver_version_info(read_fixture(DRIVER))
    for name in TOOLKITS:
        tk = parse_toolkit_install_info(read_fixture(VF + name))
        assert toolkit_accepts_driver(tk, d).accepted is True, name
    # the driver's own list (C30, C13, C15, C17) does not name the 8.x toolkit families
    tk = parse_toolkit_install_info(read_fixture(VF + sorted(TOOLKITS)[0]))
    assert driver_accepts_toolkit(d, tk).accepted is False


# ----------------------------------------------------------------- version logic


@pytest.mark.parametrize(
    ("a", "b", "expected"),
    [
        ("23.0.rc3", "23.0.0", -1),
        ("23.0.rc2", "23.0.rc3", -1),
        ("23.0.0", "23.0.3", -1),
        ("23.0.3", "23.0.rc3", 1),
        ("24.1.rc1", "24.1.rc1.b030", -1),
        ("24.1.rc1.b030", "24.1.rc2", -1),
        ("25.5.2", "25.5.2", 0),
        ("8.1.RC1", "8.1.rc1", 0),
        ("8.1.RC1", "8.0.0", 1),
        ("8.1.RC1", "8.1.0", -1),
        ("7.1.0.11.220", "7.1.0.7.220", 1),
        ("7.0.T10", "7.0.RC1", -1),
        ("7.0.T10", "7.0.0", -1),
        ("10.0", "9.9.9", 1),
    ],
)
def test_compare_versions(a: str, b: str, expected: int) -> None:
    assert compare_versions(a, b) == expected
    assert compare_versions(b, a) == -expected


@pytest.mark.parametrize(
    ("version", "low", "high", "inside"),
    [
        ("23.0.rc3", "23.0.rc3", "23.0.rc3.", True),
        ("23.0.rc3.b010", "23.0.rc3", "23.0.rc3.", True),
        ("23.0.rc3.1", "23.0.rc3", "23.0.rc3.", True),
        ("23.0.rc2", "23.0.rc3", "23.0.rc3.", False),
        ("23.0.0", "23.0.rc3", "23.0.rc3.", False),
        ("23.0.0.5", "23.0.0", "23.0.0.", True),
        ("23.0.7", "23.0.0", "23.0.0.", False),
        ("7.1.0.11.220", "7.0.0", "7.2.99", True),
        ("7.1.0.11.220", "7.0.0", "7.1.99", True),
        ("7.3.0.1.220", "7.0.0", "7.2.99", False),
        ("6.4.12.1.241", "7.0.0", "7.2.99", False),
        ("", "7.0.0", "7.2.99", False),
    ],
)
def test_version_in_range(version: str, low: str, high: str, inside: bool) -> None:
    assert version_in_range(version, low, high) is inside


def test_inner_family() -> None:
    assert inner_family("V100R001C15SPC006B220") == (100, 1, 15)
    assert inner_family("v100r001c13b222") == (100, 1, 13)
    assert inner_family("V100R001C1") == (100, 1, 1)
    assert inner_family("8.0.0") is None


def test_family_is_not_a_string_prefix_match() -> None:
    d = parse_driver_version_info("Version=24.1.0\nInnerversion=V100R001C150SPC001B001\n")
    tk = parse_toolkit_install_info("version=8.0.0\ncompatible_version=[V100R001C15]\n")
    assert toolkit_accepts_driver(tk, d).accepted is False


def test_compatibility_unknown_when_inputs_missing() -> None:
    empty_d = parse_driver_version_info("")
    empty_fw = parse_firmware_version_info("")
    empty_tk = parse_toolkit_install_info("")
    assert driver_accepts_firmware(empty_d, empty_fw).accepted is None
    assert firmware_accepts_driver(empty_fw, empty_d).accepted is None
    assert driver_firmware_compatibility(empty_d, empty_fw).accepted is None
    assert toolkit_accepts_driver(empty_tk, empty_d).accepted is None
    assert driver_accepts_toolkit(empty_d, empty_tk).accepted is None
    assert "no Version= line" in empty_d.problems


# ----------------------------------------------------------------- hostile input


@pytest.mark.parametrize(
    "text",
    [
        "",
        "\x00",
        "garbage",
        "=",
        "Version",
        "Version=",
        "compatible_version_fw=[[[",
        "\ufffd=\ufffd",
    ],
)
def test_hostile_small(text: str) -> None:
    d = parse_driver_version_info(text)
    fw = parse_firmware_version_info(text)
    tk = parse_toolkit_install_info(text)
    inst = parse_ascend_install_info(text)
    for fact in (d, fw, tk, inst):
        json.dumps(fact.to_dict())
    assert d.version is None and d.problems
    assert fw.version is None and fw.problems
    assert tk.version is None and tk.problems


def test_unreadable_compat_lists_are_reported() -> None:
    d = parse_driver_version_info("Version=24.1.0\ncompatible_version_fw=7.0.0-7.2.99\n")
    assert d.compatible_firmware == ()
    assert any("compatible_version_fw" in p for p in d.problems)
    fw = parse_firmware_version_info("Version=7.1.0\ncompatible_version_drv=any\n")
    assert any("compatible_version_drv" in p for p in fw.problems)


def test_duplicate_keys_keep_first_and_report() -> None:
    d = parse_driver_version_info("Version=24.1.0\nVersion=7.1.0.11.220\n")
    assert d.version == "24.1.0"
    assert any("more than once" in p for p in d.problems)


def test_crlf_nul_and_non_utf8() -> None:
    raw = read_fixture(FIRMWARE).replace("\n", "\r\n").encode() + b"\xff\xfe\x00junk\r\n"
    fw = parse_firmware_version_info(raw.decode("utf-8", errors="replace"))
    assert fw.version == "7.1.0.11.220"
    assert len(fw.compatible_driver) == 2
    assert any("not a key=value line" in p for p in fw.problems)


@pytest.mark.parametrize("seed", range(3))
def test_truncated_anywhere(seed: int) -> None:
    text = read_fixture(DRIVER)
    full = dict(parse_key_values(text)[0])
    rng = random.Random(seed)
    for cut in sorted(rng.sample(range(1, len(text)), 40)):
        d = parse_driver_version_info(text[:cut])
        pairs = d.fields
        # every complete line read matches the full file
        for k, v in pairs[:-1]:
            assert full[k] == v
        if d.version is not None:
            assert "24.1.rc1".startswith(d.version)


def test_binary_garbage() -> None:
    rng = random.Random(3)
    blob = bytes(rng.randrange(256) for _ in range(50000)).decode("utf-8", errors="replace")
    tk = parse_toolkit_install_info(blob + "\nversion=8.0.0\n")
    assert tk.version == "8.0.0"
    assert len(tk.problems) <= 101


def test_huge_input_is_fast() -> None:
    text = "\n".join(f"key{i}=[{i}.0.0,{i}.9.99]" for i in range(60000))
    text += "\nVersion=24.1.0\ncompatible_version_fw=" + ",".join(["[7.0.0,7.2.99]"] * 20000)
    d = parse_driver_version_info(text)
    fw = parse_firmware_version_info("Version=7.1.0.11.220\n")
    assert driver_accepts_firmware(d, fw).accepted is True
    assert len(d.compatible_firmware) == 20000
    assert compare_versions("1." * 20000 + "1", "1." * 20000 + "2") == -1
    assert parse_version("a" * 100000)
