"""Hostile files a user or a bundle can hand the auditor: traces, policies, presets, snapshot
bundles and JSON reports. Only a parsed result or a *reported* problem is allowed:
profiler readers never raise, `parse_policy` raises only PolicyError, `SnapshotHost` only
SnapshotError, and `render` / `diff` / `merge` end in exit 0/1 or a usage error (exit 2) — never
an internal error (exit 3, which is what an escaping exception becomes)."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import tempfile
from pathlib import Path

import click
import pytest
from hardening.helpers import DATA, REPO, fuzz_settings
from hardening.mutate import any_bytes, any_text, hostile, json_mutated, read_all
from hypothesis import given
from hypothesis import strategies as st
from shared_fixtures import fixture_files

from ascend_audit.facts import profiler
from ascend_audit.host.bundle import SnapshotError
from ascend_audit.host.snapshot import SnapshotHost
from ascend_audit.policy import PolicyError, parse_policy

EXAMPLE = REPO / "examples" / "atlas-800t-a2-ready"

KERNEL_CSVS = read_all(
    fixture_files("msprof", "*.csv")
    + sorted(DATA.glob("traces/**/kernel_details*.csv"))
    + sorted(DATA.glob("traces/**/op_s*.csv"))
)
TRACE_JSONS = read_all(fixture_files("msprof", "*.json") + sorted(DATA.glob("traces/**/*.json")))


# --- profiler files, through temp files --------------------------------------------------------


@fuzz_settings(100)
@given(st.one_of(hostile(KERNEL_CSVS), any_bytes))
def test_profiler_csv_readers_never_raise(content):
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "x_ascend_pt" / "ASCEND_PROFILER_OUTPUT"
        out.mkdir(parents=True)
        for name in ("kernel_details.csv", "op_statistic.csv"):
            p = out / name
            p.write_bytes(
                content if isinstance(content, bytes) else content.encode("utf-8", "replace")
            )
        profiler.summarize_kernels(out / "kernel_details.csv")
        profiler.parse_op_statistic(out / "op_statistic.csv")
        facts = profiler.collect_profiler_facts(tmp)
        assert facts is not None


@fuzz_settings(80)
@given(st.one_of(hostile(TRACE_JSONS), any_bytes))
def test_profiler_trace_view_reader_never_raises(content):
    with tempfile.TemporaryDirectory() as tmp:
        p = Path(tmp) / "trace_view.json"
        p.write_bytes(content if isinstance(content, bytes) else content.encode("utf-8", "replace"))
        profiler.summarize_trace_view(p)
        profiler.collect_profiler_facts(p)


def test_profiler_paths_that_are_not_files(tmp_path):
    fifo = tmp_path / "kernel_details.csv"
    os.mkfifo(fifo)  # opening a FIFO for reading would block forever
    for p in (tmp_path / "absent.csv", tmp_path, Path("/dev/null")):
        profiler.summarize_kernels(p)
        profiler.collect_profiler_facts(p)


# --- policies and presets -----------------------------------------------------------------------


def _preset_texts() -> list[str]:
    d = REPO / "ascend_audit" / "presets"
    texts = read_all(sorted(d.glob("*.toml")))
    texts += read_all(sorted((REPO / "examples").glob("*/policy.toml")))
    return texts


POLICIES = _preset_texts()


def test_preset_files_all_parse():
    from ascend_audit.presets import preset_names, preset_text

    names = preset_names()
    assert names, "no bundled presets found"
    for name in names:
        parse_policy(preset_text(name) or "", f"preset {name}")


@fuzz_settings(150)
@given(hostile(POLICIES))
def test_parse_policy_raises_only_policy_error(text):
    try:
        parse_policy(text, "fuzz.toml")
    except PolicyError as exc:
        assert str(exc), "a PolicyError must say what is wrong"


@fuzz_settings(60)
@given(
    st.dictionaries(
        st.sampled_from(
            [
                "gate",
                "required_layers",
                "timeout",
                "waivers",
                "driver",
                "operator",
                "framework",
                "fail_on",
                "x",
            ]
        ),
        st.recursive(
            st.one_of(
                st.integers(), st.text(max_size=10), st.booleans(), st.floats(allow_nan=False)
            ),
            lambda c: st.lists(c, max_size=3) | st.dictionaries(st.text(max_size=8), c, max_size=3),
            max_leaves=8,
        ),
        max_size=5,
    )
)
def test_parse_policy_wrong_types_raise_only_policy_error(doc):
    try:
        import tomli_w  # type: ignore[import-not-found]
    except ImportError:
        tomli_w = None
    lines = []
    for k, v in doc.items():
        lines.append(f"{k} = {json.dumps(v)}")
    text = tomli_w.dumps(doc) if tomli_w else "\n".join(lines)
    with contextlib.suppress(PolicyError):
        parse_policy(text, "fuzz.toml")


# --- snapshot bundles ---------------------------------------------------------------------------

MANIFEST = json.loads((EXAMPLE / "manifest.json").read_text())


@pytest.fixture(scope="module")
def bundle_copy(tmp_path_factory) -> Path:
    """One copy of the example bundle; each example only rewrites its manifest (replay reads)."""
    root = tmp_path_factory.mktemp("snapshot") / "bundle"
    shutil.copytree(EXAMPLE, root)
    return root


@fuzz_settings(100)
@given(doc=st.one_of(json_mutated(MANIFEST), hostile([json.dumps(MANIFEST, indent=1)])))
def test_snapshot_host_on_mutated_manifest_raises_only_snapshot_error(bundle_copy, doc):
    """A lying or mangled manifest is refused with SnapshotError, or replays without crashing."""
    root = bundle_copy
    text = doc if isinstance(doc, str) else json.dumps(doc)
    (root / "manifest.json").write_text(text)
    try:
        host = SnapshotHost(str(root))
    except SnapshotError as exc:
        assert str(root) in str(exc)
        return
    try:
        host.run_many([["npu-smi", "info"], ["npu-smi", "info", "-t", "board", "-i", "0"]])
        host.read_text("/proc/self/mountinfo")
        host.listdir("/dev")
        host.stat("/dev/davinci0")
        host.env()
        host.identity()
        host.processes()
        host.udev("pci")
        host.which("npu-smi")
        host.input_path("x")
        host.realpath("/sys/class")
        host.readlink("/sys/class/x")
        host.policy_text()
    finally:
        host.close()


def _example_report() -> dict:
    from ascend_audit.cli import main

    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "r.json"
        with contextlib.suppress(SystemExit):
            main(
                ["run", "--example", "atlas-800t-a2-ready", "-q", "--json", str(out)],
                standalone_mode=False,
            )
        return json.loads(out.read_text())


REPORT = _example_report()


def _cli(args: list[str]) -> int:
    """Invoke the CLI in-process like `entry()` does, but let unexpected exceptions escape."""
    from ascend_audit.cli import main

    try:
        main(args, standalone_mode=False)
    except click.UsageError as exc:
        assert exc.format_message(), "usage errors must say what is wrong"
        return 2
    except click.ClickException:
        return 2
    except SystemExit as exc:
        return int(exc.code or 0)
    return 0


@fuzz_settings(60)
@given(st.one_of(json_mutated(REPORT), hostile([json.dumps(REPORT)]), any_bytes))
def test_render_diff_merge_on_mutated_reports_never_crash(doc):
    with tempfile.TemporaryDirectory() as tmp:
        good, bad = Path(tmp) / "good.json", Path(tmp) / "bad.json"
        good.write_text(json.dumps(REPORT))
        if isinstance(doc, bytes):
            bad.write_bytes(doc)
        else:
            bad.write_text(doc if isinstance(doc, str) else json.dumps(doc))
        out = Path(tmp) / "out"
        rc = _cli(
            [
                "render",
                str(bad),
                "--html",
                f"{out}.html",
                "--junit",
                f"{out}.xml",
                "--markdown",
                f"{out}.md",
            ]
        )
        assert rc in (0, 2)
        assert _cli(["diff", str(good), str(bad), "--json", f"{out}.diff.json"]) in (0, 1, 2)
        assert _cli(["diff", str(bad), str(good)]) in (0, 1, 2)
        assert _cli(
            [
                "merge",
                str(good),
                str(bad),
                "--json",
                f"{out}.fleet.json",
                "--html",
                f"{out}.fleet.html",
            ]
        ) in (0, 1, 2)


@pytest.mark.parametrize(
    "text",
    [
        "",
        "{}",
        "[]",
        "null",
        '{"verdict": 1, "results": 2}',
        '{"verdict": "READY", "results": [1]}',
        "\udcff",
    ],
)
def test_render_diff_merge_small_hostile_reports_are_usage_errors(tmp_path, text):
    from hardening.helpers import audit, no_traceback

    bad = tmp_path / "bad.json"
    bad.write_text(text, errors="surrogateescape")
    good = tmp_path / "good.json"
    good.write_text(json.dumps(REPORT))
    for args in (
        ["render", str(bad), "--html", str(tmp_path / "o.html")],
        ["diff", str(good), str(bad)],
        ["merge", str(good), str(bad)],
    ):
        rc = _cli(args)
        assert rc == 2, (args, rc)
    proc = audit("merge", str(good), str(bad))
    no_traceback(proc)
    assert proc.returncode == 2 and str(bad) in proc.stderr, proc.stderr


_ = any_text  # strategies re-exported for other hardening modules
