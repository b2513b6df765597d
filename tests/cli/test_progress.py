"""The progress helper: a bar with bytes and rate only on a TTY for big inputs, else silence."""

from __future__ import annotations

import io
import subprocess
import sys

import pytest

from ascend_audit import progress


class _Tty(io.StringIO):
    def isatty(self) -> bool:
        return True


@pytest.fixture(autouse=True)
def _reset() -> None:
    progress._state.update(quiet=False, stream=None, force=False)  # CLI tests may have set -q
    yield
    progress._state.update(quiet=False, stream=None, force=False)


def test_big_input_on_a_tty_draws_bytes_and_rate() -> None:
    out = _Tty()
    progress.configure(stream=out)
    total = progress.THRESHOLD + 1
    with progress.byte_progress("hashing", total) as advance:
        for _ in range(4):
            advance(total // 4)
        advance(total - 4 * (total // 4))
    text = out.getvalue()
    assert "hashing" in text
    assert "MiB of 95.4 MiB" in text and "/s" in text


@pytest.mark.parametrize(
    ("stream", "quiet", "total"),
    [
        (io.StringIO(), False, progress.THRESHOLD * 2),  # not a TTY
        (_Tty(), True, progress.THRESHOLD * 2),  # -q
        (_Tty(), False, progress.THRESHOLD),  # not over 100 MB
        (_Tty(), False, None),  # size unknown
    ],
)
def test_silent_when_not_a_tty_quiet_or_small(stream: io.StringIO, quiet: bool, total: int) -> None:
    progress.configure(stream=stream, quiet=quiet)
    with progress.byte_progress("reading", total) as advance:
        advance(10)
    assert stream.getvalue() == ""


def test_one_bar_at_a_time() -> None:
    out = _Tty()
    progress.configure(stream=out)
    big = progress.THRESHOLD * 2
    with progress.byte_progress("first", big) as a, progress.byte_progress("second", big) as b:
        a(big)
        b(big)
    assert "first" in out.getvalue() and "second" not in out.getvalue()


def test_human_bytes() -> None:
    assert progress.human_bytes(512) == "512 B"
    assert progress.human_bytes(1536) == "1.5 KiB"
    assert progress.human_bytes(3 * 1024**3) == "3.0 GiB"


def test_importing_the_helper_does_not_import_click() -> None:
    code = "import sys, ascend_audit.progress; print('click' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_tree_bytes_of_a_file_a_tree_and_nothing(tmp_path) -> None:
    (tmp_path / "a").write_bytes(b"x" * 10)
    (tmp_path / "d").mkdir()
    (tmp_path / "d" / "b").write_bytes(b"y" * 5)
    (tmp_path / "link").symlink_to(tmp_path / "a")
    assert progress.tree_bytes(str(tmp_path / "a")) == 10
    assert progress.tree_bytes(str(tmp_path)) == 15
    assert progress.tree_bytes(str(tmp_path / "absent")) is None


def test_trace_reading_feeds_the_callback(tmp_path) -> None:
    from ascend_audit.facts.profiler import collect_profiler_facts

    rows = "".join(f"aclnnAdd_{i},AI_CORE,AiCore,{i % 7 + 1}.5\n" for i in range(2000))
    trace = tmp_path / "kernel_details.csv"
    trace.write_text("Name,Type,Accelerator Core,Duration(us)\n" + rows)
    seen: list[int] = []
    collect_profiler_facts(str(tmp_path), seen.append)
    assert sum(seen) >= trace.stat().st_size - 100  # the data rows, read in chunks


def test_weight_hashing_feeds_the_callback(tmp_path) -> None:
    from ascend_audit.facts.weights import write_manifest

    (tmp_path / "w.bin").write_bytes(b"z" * 3_000_000)
    seen: list[int] = []
    write_manifest(str(tmp_path), full=True, progress=seen.append)
    assert sum(seen) == 3_000_000
