"""Every pure parser under facts/ answers hostile input with a result, never an exception.

Inputs: arbitrary text and bytes, and the real fixtures (../shared/fixtures, tests/data) randomly
truncated, with lines and columns deleted, duplicated or swapped. A parser that raises fails here.
"""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

import pytest
from hardening.helpers import DATA, fuzz_settings
from hardening.mutate import any_bytes, any_text, hostile, read_all
from hypothesis import given
from hypothesis import strategies as st
from shared_fixtures import FIXTURES, fixture_files
from sysroot import healthy_910b_node

from ascend_audit.facts import (
    bench_result,
    fallback_log,
    hccn,
    mounts,
    npu_smi,
    nvme_cli,
    probe,
    rank_table,
    serving_log,
    sysfs,
    versions,
)
from ascend_audit.facts.serving_config.args_dict import parse_vllm_args_dict
from ascend_audit.facts.serving_config.argv import is_vllm_argv, parse_vllm_argv
from ascend_audit.facts.serving_config.config_file import parse_config_file
from ascend_audit.facts.serving_config.launch_script import is_launch_script, parse_launch_script
from ascend_audit.facts.serving_config.mindie import parse_mindie_config
from ascend_audit.facts.serving_config.option_json import parse_option_json
from ascend_audit.facts.serving_config.vllm_yaml import parse_vllm_yaml

NPU_SMI_TEXTS = read_all(
    fixture_files("npu_smi_info")
    + fixture_files("npu_smi_board")
    + fixture_files("node_dumps")
    + [DATA / "npu_smi_info_a3_8npu.txt", DATA / "driver" / "npu_smi_info_910b3_8npu.txt"]
)
VERSION_TEXTS = read_all(fixture_files("version_files") + fixture_files("node_dumps"))
HCCN_TEXTS = read_all(
    [p for p in fixture_files("hccn") if p.suffix == ".txt"] + sorted((DATA / "hccn").glob("*"))
)
RANK_TABLE_TEXTS = read_all(fixture_files("hccn", "*.json*"))
BENCH_TEXTS = read_all(sorted((DATA / "bench").glob("*.json")))
CONFIG_TEXTS = read_all(
    sorted((DATA / "framework").glob("*.yaml"))
    + sorted((DATA / "framework").glob("*.json"))
    + fixture_files("framework", "*.json")
)
LOG_TEXTS = read_all(
    sorted((DATA / "framework").glob("*.log"))
    + fixture_files("framework", "*.md")
    + fixture_files("fallback_logs")
)


def _node_file(rel: str) -> str:
    """A file of the fake 910B node (its mountinfo), built once."""
    with tempfile.TemporaryDirectory() as tmp:
        healthy_910b_node(tmp)
        return (Path(tmp) / rel.lstrip("/")).read_text()


MOUNTINFO = _node_file("/proc/self/mountinfo")


def _nvme_samples() -> list[str]:
    ref = FIXTURES.parent / "reference" / "driver" / "nvme-cli_json_real_samples.txt"
    samples = [
        json.dumps(
            {
                "Devices": [
                    {
                        "HostNQN": "nqn.2014-08.org.nvmexpress:uuid:1",
                        "Subsystems": [
                            {
                                "Subsystem": "nvme-subsys0",
                                "SubsystemNQN": "nqn.x",
                                "Controllers": [
                                    {"Controller": "nvme0", "Transport": "rdma", "Address": "a"}
                                ],
                                "Namespaces": [{"NameSpace": "nvme0n1", "UsedBytes": 1}],
                            }
                        ],
                    }
                ]
            },
            indent=2,
        )
    ]
    if ref.is_file():
        text = ref.read_text(errors="replace")
        start = text.find("{")
        if start >= 0:
            samples.append(text[start:])
    return samples


def _never_raises(fn, *args, **kwargs):
    try:
        return fn(*args, **kwargs)
    except RecursionError:  # pragma: no cover - would be a finding, reported below
        raise AssertionError(f"{fn.__qualname__} recursed without bound") from None


# --- npu-smi ----------------------------------------------------------------------------------


def test_fixture_lists_are_not_empty():
    """The fuzzers below mutate real outputs; without them they would only test random text."""
    if not FIXTURES.is_dir():
        pytest.skip(
            "../shared/fixtures is not beside this checkout: the fuzzers mutate only "
            "tests/data and random text here"
        )
    assert NPU_SMI_TEXTS and VERSION_TEXTS and HCCN_TEXTS and BENCH_TEXTS and LOG_TEXTS


@fuzz_settings(150)
@given(hostile(NPU_SMI_TEXTS))
def test_npu_smi_parsers_never_raise(text):
    info = npu_smi.parse_info(text)
    assert isinstance(info.problems, (tuple, list))
    npu_smi.parse_kv(text)
    npu_smi.parse_mapping(text)
    npu_smi.parse_topo(text)
    npu_smi.parse_affinity(text[:80])
    npu_smi.normalize_bus_id(text[:40])


# --- version files ----------------------------------------------------------------------------


@fuzz_settings(120)
@given(hostile(VERSION_TEXTS), any_text)
def test_version_parsers_never_raise(text, other):
    versions.parse_key_values(text)
    drv = versions.parse_driver_version_info(text)
    fw = versions.parse_firmware_version_info(text)
    tk = versions.parse_toolkit_install_info(text, "/usr/local/Ascend/x")
    versions.parse_ascend_install_info(text)
    versions.split_dump_sections(text)
    versions.driver_firmware_compatibility(drv, fw)
    versions.toolkit_accepts_driver(tk, drv)
    versions.driver_accepts_toolkit(drv, tk)
    short = text[:60]
    versions.parse_version(short)
    versions.compare_versions(short, other[:60])
    versions.version_in_range(short, other[:30], other[30:60])
    versions.inner_family(short)


# --- sysfs ------------------------------------------------------------------------------------


@fuzz_settings(150)
@given(st.one_of(any_text, st.none(), st.sampled_from(["0-3,8-11\n", "16.0 GT/s PCIe", "0x19e5"])))
def test_sysfs_value_parsers_never_raise(text):
    for fn in (
        sysfs.parse_link_speed,
        sysfs.parse_link_width,
        sysfs.parse_hex_id,
        sysfs.parse_int,
        sysfs.parse_numa_node,
        sysfs.parse_cpu_ranges,
        sysfs.parse_cpulist,
        sysfs.parse_nvme_address,
    ):
        fn(text)
    if text is not None:
        sysfs.is_bdf(text)


def test_sysfs_cpulist_huge_range_is_bounded():
    """`0-4294967295` must not build a 4-billion-element tuple (memory and time bound)."""
    import time

    start = time.process_time()
    out = sysfs.parse_cpulist("0-4294967295\n")
    assert time.process_time() - start < 5
    assert out is None or len(out) <= 1 << 20


# --- mounts and nvme-cli ----------------------------------------------------------------------


@fuzz_settings(120)
@given(st.data())
def test_mount_parsers_never_raise(data):
    text = data.draw(hostile([MOUNTINFO]))
    table = mounts.parse_mountinfo(text)
    mounts.parse_proc_mounts(text)
    mounts.unescape_mount_field(text[:200])
    path = data.draw(st.sampled_from(["/models", "/", "", "relative", "/a/../../b"]))
    mounts.find_mount(path, table.mounts)


@fuzz_settings(120)
@given(st.one_of(hostile(_nvme_samples()), any_text, st.none()))
def test_nvme_list_json_never_raises(text):
    out = nvme_cli.parse_nvme_list_json(text)
    assert isinstance(out.problems, (tuple, list))


def test_nvme_list_json_deep_nesting_is_a_problem_not_a_crash():
    out = nvme_cli.parse_nvme_list_json("[" * 200_000 + "]" * 200_000)
    assert out.problems


# --- hccn_tool and rank tables ----------------------------------------------------------------

HCCN_PARSERS = [
    getattr(hccn, n) for n in dir(hccn) if n.startswith("parse_") and callable(getattr(hccn, n))
]


def test_hccn_parser_list_is_complete():
    assert len(HCCN_PARSERS) >= 10, [f.__name__ for f in HCCN_PARSERS]


@fuzz_settings(100)
@given(st.one_of(hostile(HCCN_TEXTS), any_bytes))
def test_hccn_parsers_never_raise(text):
    for fn in HCCN_PARSERS:
        fn(text)
    hccn.split_loop_output(text)


@fuzz_settings(120)
@given(st.one_of(hostile(RANK_TABLE_TEXTS), any_bytes))
def test_rank_table_parser_never_raises(text):
    table = rank_table.parse_rank_table(text)
    rank_table.problems_of(table)
    rank_table.devices_of_server(table, "10.0.0.1")
    if isinstance(text, str):
        rank_table.strip_json_comments(text)


def test_rank_table_deep_nesting_is_a_problem_not_a_crash():
    table = rank_table.parse_rank_table('{"server_list":' + "[" * 100_000 + "]" * 100_000 + "}")
    assert rank_table.problems_of(table)


# --- serving logs, configs, benchmark results, fallbacks, probe output ------------------------


@fuzz_settings(120)
@given(hostile(LOG_TEXTS))
def test_serving_and_fallback_log_scanners_never_raise(text):
    lines = list(enumerate(text.split("\n"), 1))
    facts = serving_log.scan_serving_log(iter(lines), "fuzz.log")
    assert facts is not None
    fallback_log.scan_fallback_lines(iter(lines), "fuzz.log")
    fallback_log.scan_fallback_lines(text.split("\n"), "fuzz.log")


@fuzz_settings(60)
@given(st.lists(st.one_of(st.tuples(st.integers(), any_text), any_text, st.none(), any_bytes)))
def test_serving_log_scanner_takes_any_iterable(items):
    serving_log.scan_serving_log(iter(items), "odd.log")


@fuzz_settings(120)
@given(hostile(CONFIG_TEXTS), st.dictionaries(st.text(max_size=20), st.text(max_size=20)))
def test_serving_config_parsers_never_raise(text, env):
    outs = [
        parse_config_file(text, "cfg", env),
        parse_vllm_yaml(text, "cfg.yaml", env),
        parse_option_json(text, "extra.json"),
        parse_mindie_config(text, "config.json", env),
        parse_launch_script(text, "run.sh", env),
        parse_vllm_args_dict(text, "vllm.log", 1, env),
    ]
    assert all(isinstance(o.problems, tuple) and isinstance(o.env, dict) for o in outs)
    assert is_launch_script(text) in (True, False)


@fuzz_settings(120)
@given(
    st.lists(
        st.one_of(
            st.sampled_from(
                [
                    "vllm",
                    "serve",
                    "--api-key",
                    "-O3",
                    "--additional-config",
                    "{",
                    "--tp",
                    "--",
                    "--compilation-config",
                    '{"level": 3}',
                    "-tp",
                    "2",
                    "--no-enable-prefix-caching",
                    "--config",
                    "x.yaml",
                    "--kv-transfer-config.kv_role",
                    "true",
                ]
            ),
            st.text(max_size=20),
        ),
        max_size=30,
    ),
    st.one_of(st.none(), any_text),
)
def test_vllm_argv_parser_never_raises(argv, config_text):
    parse_vllm_argv(argv, "cmdline", {}, config_text, "cfg.yaml")
    is_vllm_argv(argv)


@fuzz_settings(120)
@given(hostile(BENCH_TEXTS))
def test_bench_result_parser_never_raises(text):
    bench_result.parse_bench_result(text, "bench.json")


@fuzz_settings(80)
@given(st.one_of(any_text, any_bytes, st.none()), st.one_of(any_text, st.none()), st.integers())
def test_probe_output_parser_never_raises(stdout, stderr, rc):
    probe.parse_probe_output(stdout, stderr, rc, False)
    probe.parse_probe_output(stdout, stderr, None, True)


@pytest.mark.parametrize(
    "text",
    ["[" * 200_000, "{" * 200_000, "a: " * 100_000, "- " * 100_000, "&a [*a, *a]\n" * 10],
)
def test_serving_config_pathological_documents(text):
    """Deep nesting and YAML alias tricks give a problem, not a RecursionError or a hang."""
    out = parse_config_file(text, "evil.yaml")
    assert out is not None
    bench_result.parse_bench_result(text, "evil.json")
