"""Planted secrets never reach an output: JSON, HTML, JUnit, Markdown, Prometheus, snapshot bundles
(directory and .tar.gz, every file), fleet reports, or the terminal (stdout + stderr).

Secrets are planted in the audit's environment, a serving log (incl. vLLM's
`args: Namespace(... api_key='...')` echo and a logged command line), a serving-config YAML, and a
vLLM command line (parsed in-process: a fake sysroot cannot fake the process listing)."""

from __future__ import annotations

import json
import shutil
import tarfile
from pathlib import Path

import pytest
from hardening.helpers import DATA, audit, every_output, fake_node, no_traceback

from ascend_audit.facts.serving_config.argv import parse_vllm_argv
from ascend_audit.redact import MASK, redact_argv, redact_env, redact_text

HF = "hf_PlantedHfTokenAbCdEfGhIjKl0123"
OPENAI = "sk-proj-PlantedOpenAiKey000011112222"
API = "PlantedApiKeyValue77"
URLPW = "PlantedUrlPassw0rd"
DBPW = "PlantedDbPassw0rd"
SECRETS = (HF, OPENAI, API, URLPW, DBPW)


def _plant(tmp: Path) -> tuple[Path, Path]:
    log = tmp / "serve.log"
    shutil.copyfile(DATA / "framework" / "vllm_ascend_v1_aclgraph_serve.log", log)
    with log.open("a") as fh:
        fh.write(
            "INFO 09-02 10:11:05 [api_server.py:1] args: Namespace(model='/models/Qwen3-8B', "
            f"api_key='{API}', hf_token='{HF}', download_dir='https://bob:{URLPW}@hub.example/x')\n"
            f"INFO 09-02 10:11:05 [launcher.py:9] cmd: vllm serve /models/Qwen3-8B --api-key {API}"
            f" --hf-token={HF}\n"
            f"WARNING 09-02 10:11:06 [env.py:1] OPENAI_API_KEY={OPENAI} password={DBPW}\n"
        )
    cfg = tmp / "serve.yaml"
    cfg.write_text(
        "model: /models/Qwen3-8B\n"
        f"api-key: {API}\n"
        f"hf-token: {HF}\n"
        "tensor-parallel-size: 2\n"
        f"download-dir: https://admin:{URLPW}@mirror.example.com/models\n"
        f"served-model-name: 'x --api-key {API}'\n"
    )
    return log, cfg


def _assert_clean(where: str, data: bytes | str) -> None:
    text = data if isinstance(data, str) else data.decode("utf-8", errors="replace")
    for s in SECRETS:
        assert s not in text, f"secret {s[:12]}… leaked into {where}"


def _walk_clean(root: Path) -> int:
    n = 0
    for p in sorted(root.rglob("*")):
        if p.is_file():
            _assert_clean(str(p.relative_to(root)), p.read_bytes())
            n += 1
    return n


@pytest.fixture(scope="module")
def planted(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("secrets")
    root, _bindir, env = fake_node(tmp)
    env.update(
        HF_TOKEN=HF,
        OPENAI_API_KEY=OPENAI,
        VLLM_API_KEY=API,
        DATABASE_URL=f"postgres://svc:{DBPW}@db.internal/app",
        HTTPS_PROXY=f"http://proxyuser:{URLPW}@proxy:3128",
    )
    log, cfg = _plant(tmp)
    inputs = ["--serving-log", str(log), "--serving-config", str(cfg)]
    return tmp, root, env, inputs


def test_reports_and_terminal_hold_no_secret(planted):
    tmp, root, env, inputs = planted
    out = tmp / "out"
    proc = audit(
        "run",
        "--sysroot",
        str(root),
        "--no-gate",
        "-v",
        *inputs,
        "--trace",
        str(DATA / "traces" / "no_aicpu"),
        "-o",
        str(out),
        *every_output(tmp),
        env=env,
    )
    no_traceback(proc)
    assert proc.returncode in (0, 1), proc.stderr
    _assert_clean("terminal output", proc.stdout + proc.stderr)
    for name in ("r.html", "r.xml", "r.md", "r.prom", "r.json"):
        _assert_clean(name, (tmp / name).read_bytes())
    assert _walk_clean(out) >= 1
    # the framework checks did read the planted inputs (so the test is not vacuous)
    report = json.loads((tmp / "r.json").read_text())
    assert str(planted[3][1]) in json.dumps(report["inputs"])
    fwk = [r for r in report["results"] if r["layer"] == "framework"]
    assert any(r["status"] not in ("SKIP", "BLOCKED") for r in fwk)
    # fleet view of the report
    merged = audit(
        "merge",
        str(tmp / "r.json"),
        "--json",
        str(tmp / "fleet.json"),
        "--html",
        str(tmp / "fleet.html"),
        env=env,
    )
    no_traceback(merged)
    _assert_clean("merge terminal output", merged.stdout + merged.stderr)
    _assert_clean("fleet.json", (tmp / "fleet.json").read_bytes())
    _assert_clean("fleet.html", (tmp / "fleet.html").read_bytes())
    # re-rendered from the JSON
    rendered = audit(
        "render",
        str(tmp / "r.json"),
        "--html",
        str(tmp / "rr.html"),
        "--markdown",
        str(tmp / "rr.md"),
        env=env,
    )
    _assert_clean("render output", rendered.stdout + rendered.stderr)


@pytest.mark.parametrize("as_tar", [False, True], ids=["dir", "tar.gz"])
def test_snapshot_bundles_hold_no_secret(planted, as_tar):
    tmp, root, env, inputs = planted
    dest = tmp / ("bundle.tar.gz" if as_tar else f"bundle-{as_tar}")
    proc = audit("collect", "--sysroot", str(root), *inputs, "-o", str(dest), env=env)
    no_traceback(proc)
    assert proc.returncode in (0, 1), proc.stderr
    _assert_clean("collect terminal output", proc.stdout + proc.stderr)
    if as_tar:
        unpacked = tmp / "unpacked"
        with tarfile.open(dest) as tf:
            for m in tf.getmembers():
                if m.isfile():
                    _assert_clean(f"{dest.name}:{m.name}", tf.extractfile(m).read())
            tf.extractall(unpacked, filter="data")
        bundle = unpacked
    else:
        bundle = dest
    n = _walk_clean(bundle)
    copied = list((bundle / "inputs").rglob("serve.*"))
    assert len(copied) == 2, "the serving log and config are copied into the bundle"
    assert MASK in copied[0].read_text() or MASK in copied[1].read_text()
    assert n >= 3
    # replaying the bundle reports nothing secret either
    replay = audit(
        "run",
        "--snapshot",
        str(dest),
        "--no-gate",
        "-v",
        "--json",
        str(tmp / f"replay-{as_tar}.json"),
        env=env,
    )
    no_traceback(replay)
    _assert_clean("replay output", replay.stdout + replay.stderr)
    _assert_clean("replay json", (tmp / f"replay-{as_tar}.json").read_bytes())


def test_vllm_command_line_is_redacted_in_config_facts():
    argv = [
        "python",
        "-m",
        "vllm.entrypoints.openai.api_server",
        "--model",
        "/m",
        "--api-key",
        API,
        f"--hf-token={HF}",
        "--download-dir",
        f"https://u:{URLPW}@h/x",
        "--tensor-parallel-size",
        "2",
    ]
    cfg = parse_vllm_argv(argv, "cmdline", {"OPENAI_API_KEY": OPENAI})
    _assert_clean("parsed vLLM argv", repr(cfg))
    assert cfg.options.get("tensor_parallel_size") in (2, "2")
    _assert_clean("redacted argv", " ".join(redact_argv(argv)))


@pytest.mark.parametrize(
    "text",
    [
        f"args: Namespace(api_key='{API}', port=8000)",
        f"vllm serve m --api-key {API} --port 8000",
        f'vllm serve m --api-key="{API}"',
        f"git clone https://user:{URLPW}@example.com/r.git",
        f"Authorization: Bearer {API}",
        f"HF_TOKEN={HF}",
        f"export OPENAI_API_KEY={OPENAI}",
        f'{{"password": "{DBPW}"}}',
        f"password={DBPW}&user=x",
    ],
)
def test_redact_text_masks_each_shape(text):
    out = redact_text(text)
    _assert_clean("redacted text", out)
    assert MASK in out


def test_redact_env_masks_by_name_and_by_value():
    env = redact_env({"HF_TOKEN": "plain", "X": f"http://a:{URLPW}@h", "PATH": "/usr/bin"})
    assert env["HF_TOKEN"] == MASK and URLPW not in env["X"] and env["PATH"] == "/usr/bin"


@pytest.mark.parametrize(
    "text",
    [
        '"total_token_throughput": 6020.7',
        "total_input_tokens: 1234",
        '"tokenizer": "/models/Qwen3-8B"',
        "max_tokens=256",
        "author: ops",
    ],
)
def test_redaction_leaves_non_secret_token_counts_alone(text):
    """Bundles copy inputs through redact_text: a count must survive, or replays would differ."""
    assert redact_text(text) == text
