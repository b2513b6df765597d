"""FWK-ACC-001 / FWK-CHIP-001: accessory versions against CANN, chips against the stack."""

from __future__ import annotations

from pathlib import Path

import pytest
from fakenode import FakeNpu, npu_smi_outputs
from shared_fixtures import read_fixture
from standins import node_env, standin
from sysroot import write_tree

from ascend_audit.context import Context
from ascend_audit.facts.accessory import chip_family, load_rules, parse_version_info, release_of
from ascend_audit.facts.framework_inputs import PROBE, ProbeRun
from ascend_audit.facts.probe import ProbeFacts
from ascend_audit.host.live import LiveHost
from ascend_audit.model import Status
from ascend_audit.policy import parse_policy
from ascend_audit.registry import load_registry

NNAL_FIXTURE = (
    "field/versions/nnal_atb_version_info_8.0.0.B100_and_toolbox_install_info_6.0.RC1_cat-n_"
    "vllm-ascend-451.txt"
)
A = "/usr/local/Ascend"
TOOLKIT = f"{A}/ascend-toolkit/latest/aarch64-linux/ascend_toolkit_install.info"


def atb(version: str) -> str:
    return (
        "Ascend-cann-atb : " + version.split(".B")[0] + "\n"
        f"Ascend-cann-atb Version : {version}\nPlatform : aarch64\n"
    )


def node(cann: str = "8.0.0", **files: str) -> dict[str, str]:
    spec = {TOOLKIT: f"package_name=Ascend-cann-toolkit\nversion={cann}\narch=aarch64\n"}
    spec.update(files)
    return spec


def judge(
    tmp_path: Path,
    cid: str,
    files: dict[str, str],
    chip: str = "910B3",
    packages: dict[str, str] | None = None,
    build: tuple[str, str] | None = None,
):  # type: ignore[no-untyped-def]
    n = len(list(tmp_path.glob("root*")))  # a fresh node per call
    root, bindir = tmp_path / f"root{n}", tmp_path / "bin"
    root.mkdir()
    write_tree(root, files)
    standin(
        bindir,
        "npu-smi",
        npu_smi_outputs([FakeNpu(i, f"0000:0{i + 1}:00.0", name=chip) for i in range(2)]),
    )
    ctx = Context(LiveHost(str(root), environ=node_env(bindir)), parse_policy(""))
    if packages is not None:
        pf = ProbeFacts(
            ran=True,
            packages=tuple(packages.items()),
            build_device_type=build[0] if build else None,
            build_soc_version=build[1] if build else None,
        )
        ctx._facts[PROBE.name] = ProbeRun("/opt/venv/bin/python", "--python", None, pf)
    return load_registry(entry_points=False).get(cid).func(ctx)


# --- parsers ----------------------------------------------------------------------------------


def test_real_atb_version_file_with_cat_n_and_fences():
    text = read_fixture(NNAL_FIXTURE)
    assert parse_version_info(text, ("Ascend-cann-atb Version",)) == "8.0.0.B100"
    assert release_of("8.0.0.B100") == "8.0.0" and release_of("8.0.RC3.alpha001") == "8.0.RC3"
    assert parse_version_info("version=8.1.RC1\nversion_dir=8.1.RC1\n", ("version",)) == "8.1.RC1"
    assert parse_version_info("\x00\xff garbage", ("version",)) is None


@pytest.mark.parametrize(
    ("name", "family"),
    [
        ("910B4-1", "A2"),
        ("910B3", "A2"),
        ("Ascend910_9391", "A3"),
        ("310P3", "310P"),
        ("910", "910"),
        ("910ProB", "910"),
        ("310B1", "310B"),
        ("", None),
        ("XPU", None),
    ],
)
def test_chip_family(name, family):
    assert chip_family(name) == family


def test_every_rule_has_a_source_and_a_verdict():
    rules = load_rules()
    assert len(rules) >= 10
    assert all(r.source and r.verdict in ("FAIL", "WARN", "PASS") for r in rules)


# --- FWK-ACC-001 ------------------------------------------------------------------------------


def test_matching_atb_and_opp_kernel_pass(tmp_path):
    files = node(
        **{
            f"{A}/nnal/atb/latest/version.info": atb("8.0.0.B100"),
            f"{A}/ascend-toolkit/latest/opp_kernel/version.info": "version=8.0.0\n",
        }
    )
    out = judge(tmp_path, "FWK-ACC-001", files)
    assert out.status is Status.PASS, out.summary
    assert "NNAL/ATB 8.0.0.B100, opp_kernel 8.0.0 pair with CANN 8.0.0" in out.summary


def test_atb_of_another_release_fails_citing_the_rule(tmp_path):
    files = node("8.1.RC1", **{f"{A}/nnal/atb/latest/version.info": atb("8.0.0.B100")})
    out = judge(tmp_path, "FWK-ACC-001", files)
    assert out.status is Status.FAIL
    assert "NNAL/ATB 8.0.0.B100" in out.summary and "CANN toolkit 8.1.RC1 is 8.1.RC1" in out.summary
    assert "[source: vllm-ascend installation guide" in out.summary


def test_opp_kernel_mismatch_fails(tmp_path):
    files = node(
        "8.0.0", **{f"{A}/ascend-toolkit/latest/opp_kernel/version.info": "version=8.0.RC3\n"}
    )
    out = judge(tmp_path, "FWK-ACC-001", files)
    assert out.status is Status.FAIL and "opp_kernel 8.0.RC3" in out.summary


def test_mindie_against_cann_and_atb_models(tmp_path):
    files = node(
        "8.2.RC1",
        **{
            f"{A}/mindie/latest/version.info": "Ascend-mindie : 2.1.RC1\nPlatform : aarch64\n",
            f"{A}/atb-models/version.info": "atb-models version : 2.1.RC1\n",
        },
    )
    out = judge(tmp_path, "FWK-ACC-001", files)
    assert out.status is Status.PASS, out.summary
    assert "MindIE 2.1.RC1" in out.summary and "atb-models 2.1.RC1" in out.summary
    files[f"{A}/atb-models/version.info"] = "atb-models version : 2.0.RC2\n"
    out = judge(tmp_path, "FWK-ACC-001", files)
    assert (
        out.status is Status.WARN and "atb-models 2.0.RC2 is not from MindIE 2.1.RC1" in out.summary
    )
    files = node("8.5.0", **{f"{A}/mindie/latest/version.info": "Ascend-mindie : 2.1.RC1\n"})
    out = judge(tmp_path, "FWK-ACC-001", files)
    assert out.status is Status.FAIL and out.summary.startswith("MindIE 2.1.RC1:")


def test_no_accessories_skip_and_unknown_cann_warns(tmp_path):
    assert judge(tmp_path, "FWK-ACC-001", node()).status is Status.SKIP
    files = {f"{A}/nnal/atb/latest/version.info": atb("8.0.0.B100")}
    out = judge(tmp_path, "FWK-ACC-001", files)
    assert out.status is Status.WARN and "CANN toolkit version unknown" in out.summary
    files = node(**{f"{A}/nnal/atb/latest/version.info": "Platform : aarch64\n"})
    out = judge(tmp_path, "FWK-ACC-001", files)
    assert out.status is Status.WARN and "no version line found" in out.summary


# --- FWK-CHIP-001 -----------------------------------------------------------------------------


def test_a2_chip_with_an_a2_build_passes(tmp_path):
    out = judge(
        tmp_path, "FWK-CHIP-001", {}, "910B4-1", {"vllm_ascend": "0.11.0"}, ("A2", "Ascend910B4")
    )
    assert out.status is Status.PASS, out.summary
    assert "chips A2 (910B4-1)" in out.summary and "vllm-ascend built for A2" in out.summary


def test_a2_build_on_a3_fails(tmp_path):
    out = judge(
        tmp_path,
        "FWK-CHIP-001",
        {},
        "Ascend910_9391",
        {"vllm_ascend": "0.11.0"},
        ("A2", "Ascend910B1"),
    )
    assert out.status is Status.FAIL
    assert "vllm-ascend 0.11.0 was built for A2 (Ascend910B1), the chips are A3" in out.summary


def test_310p_with_triton_fails_and_910_is_unsupported(tmp_path):
    out = judge(
        tmp_path,
        "FWK-CHIP-001",
        {},
        "310P3",
        {"vllm_ascend": "0.10.0rc1", "triton_ascend": "3.2.0"},
        ("310P", "Ascend310P3"),
    )
    assert out.status is Status.FAIL
    assert "triton-ascend 3.2.0: triton-ascend must not be installed" in out.summary
    out = judge(
        tmp_path, "FWK-CHIP-001", {}, "310P3", {"vllm_ascend": "0.10.0rc1"}, ("310P", "Ascend310P3")
    )
    assert out.status is Status.WARN and "experimental" in out.summary
    out = judge(tmp_path, "FWK-CHIP-001", {}, "910", {"vllm_ascend": "0.9.1"})
    assert out.status is Status.FAIL and "is not supported" in out.summary


def test_chip_without_a_stack_or_unknown_chip_skips(tmp_path):
    assert judge(tmp_path, "FWK-CHIP-001", {}, "910B3").status is Status.SKIP
    assert (
        judge(tmp_path, "FWK-CHIP-001", {}, "XPU9", {"vllm_ascend": "0.9.1"}).status is Status.SKIP
    )
