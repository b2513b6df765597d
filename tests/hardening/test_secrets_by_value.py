"""Item 2: 35 distinct secrets planted by value, in every syntax, never reach an output.

Planted in the audit's environment, other processes' command lines (real processes), serving
configs (YAML, JSON), a serving log, a rank table, a trace, node files (host identity) and a
node command's output; looked for in every report format, the terminal, and the raw bytes of
directory and .tar.gz bundles (every member) and of their replays.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import tarfile
import time
from pathlib import Path

import pytest
from hardening.helpers import DATA, audit, every_output, fake_node, smi_answers

from ascend_audit.host.live import LiveHost
from ascend_audit.host.recording import RecordingHost

S = {i: f"Zq{i:02d}x{'SeCrEt' * 2}{i * 7919:06d}" for i in range(1, 36)}  # unique, shapeless
JWT = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJQbGFudGVkMjMifQ." + S[23]
AWS = "AKIA" + "PLANTEDAWSKEY026"
OPENAI = "sk-" + S[27]
PEM = f"-----BEGIN PRIVATE KEY-----\nMIIEv{S[24]}\n-----END PRIVATE KEY-----"
HF = "hf_" + S[33]
GLPAT = "glpat-" + S[13]
SECRETS = {**S, 23: JWT, 26: AWS, 27: OPENAI, 33: HF, 13: GLPAT}
assert len(set(SECRETS.values())) == 35


def _env(base: dict[str, str]) -> dict[str, str]:
    env = dict(base)
    env.update(
        APP_OPAQUE_SETTING=S[1],  # a shapeless value under a plain name: only the allowlist
        VLLM_API_KEY=S[2],
        ASCEND_OBS_SK=S[3],
        HCCL_PROXY_URL=f"http://proxyuser:{S[4]}@proxy:3128",
        VLLM_EXTRA_ARGS=f"--port 8000 --password {S[5]}",
        MINDIE_CONF_JSON=json.dumps({"tlsPkPwd": S[6], "port": 1025}),
        OMP_HEADERS=f"Authorization: Bearer {S[7]}",
    )
    return env


PROCESS_ARGS = [
    ["mysql", "-u", "root", f"-p{S[8]}", "appdb"],
    ["redis-server", "--requirepass", S[9]],
    ["curl", "-u", f"alice:{S[10]}", "http://x"],
    ["vllm-proxy", f"--api-key={S[11]}"],
    ["app", "--token", S[12]],
    ["git", "clone", f"https://oauth2:{GLPAT}@gitlab.example/x.git"],
]


def _plant_files(tmp: Path) -> dict[str, Path]:
    cfg = tmp / "serve.yaml"
    cfg.write_text(
        "model: /models/Qwen3-8B\n"
        "tensor-parallel-size: 2\n"
        f'password: "quoted value with spaces {S[14]}"\n'
        "private_key: |\n"
        f"  {S[15]}\n"
        f"  second-line-{S[15]}\n"
        f"sk: {S[18]}\n"
    )
    mindie = tmp / "config.json"
    mindie.write_text(
        json.dumps(
            {
                "ServerConfig": {"ipAddress": "127.0.0.1", "port": 1025, "tlsPkPwd": S[16]},
                "BackendConfig": {"api_key": S[17], "npuDeviceIds": [[0, 1]]},
            },
            indent=2,
        )
    )
    log = tmp / "serve.log"
    shutil.copyfile(DATA / "framework" / "vllm_ascend_v1_aclgraph_serve.log", log)
    with log.open("a") as fh:
        fh.write(
            "INFO 09-02 10:11:05 [api_server.py:1] args: Namespace(model='/models/Qwen3-8B', "
            f"api_key='{S[19]}', port=8000)\n"
            f"INFO 09-02 10:11:05 [x.py:1] extra {{'hf_token': ['{S[20]}'], 'n': 1}}\n"
            f"DEBUG 09-02 10:11:05 [http.py:1] Authorization: Token {S[21]}\n"
            f"DEBUG 09-02 10:11:05 [http.py:2] Cookie: sessionid={S[22]}; theme=dark\n"
            f"DEBUG 09-02 10:11:05 [auth.py:3] jwt {JWT}\n"
            f"DEBUG 09-02 10:11:05 [tls.py:4] loaded key\n{PEM}\n"
            f"INFO 09-02 10:11:06 [hub.py:5] mirror https://:{S[25]}@hub.example/models\n"
            f"WARNING 09-02 10:11:06 [env.py:6] AWS_ACCESS_KEY_ID {AWS} OPENAI {OPENAI}\n"
            f"WARNING 09-02 10:11:06 [db.py:7] connect passwd={S[28]} host=db\n"
        )
    rank = tmp / "hccl.json"
    doc: dict = {}
    doc.update(
        version="1.0",
        status="completed",
        server_count="1",
        password=S[29],
        server_list=[
            {
                "server_id": "node-a",
                "host_nic_ip": f"https://ops:{S[30]}@cfg.example",
                "device": [{"device_id": "0", "device_ip": "10.0.0.1", "rank_id": "0"}],
            }
        ],
    )
    rank.write_text(json.dumps(doc))
    trace = tmp / "trace"
    shutil.copytree(DATA / "traces" / "no_aicpu", trace)
    out_dir = next(trace.rglob("ASCEND_PROFILER_OUTPUT"))
    (out_dir / "notes.csv").write_text(f"k,v\nheader,Bearer {S[31]}\ncfg,pwd: {S[32]}\n")
    (out_dir / "meta.json").write_text(json.dumps({"hub": HF}))
    return {"cfg": cfg, "mindie": mindie, "log": log, "rank": rank, "trace": trace}


@pytest.fixture(scope="module")
def node(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("secrets35")
    answers = smi_answers()
    answers["info"] = answers["info"] + f"Authorization: Basic {S[35]}\n"
    root, _bindir, env = fake_node(tmp, answers)
    osr = root / "etc" / "os-release"
    osr.write_text(f'PRETTY_NAME="openEuler 22.03 token={S[34]}"\nID=openEuler\n')
    files = _plant_files(tmp)
    inputs = [
        "--serving-config",
        str(files["cfg"]),
        "--serving-config",
        str(files["mindie"]),
        "--serving-log",
        str(files["log"]),
        "--rank-table",
        str(files["rank"]),
        "--trace",
        str(files["trace"]),
    ]
    return tmp, root, _env(env), inputs


def _leaks(data: bytes | str) -> list[int]:
    text = data if isinstance(data, str) else data.decode("utf-8", errors="replace")
    return [i for i, s in SECRETS.items() if s in text]


def _tree_leaks(root: Path) -> dict[str, list[int]]:
    found = {}
    for p in sorted(root.rglob("*")):
        if p.is_file() and not p.is_symlink():
            bad = _leaks(p.read_bytes())
            if bad:
                found[str(p.relative_to(root))] = bad
    return found


def test_every_output_format_and_the_terminal(node):
    tmp, root, env, inputs = node
    out = tmp / "out"
    common = ["--sysroot", str(root), "--no-gate", "-v", *inputs]
    res = audit(
        "run",
        *common,
        "-o",
        str(out),
        *every_output(tmp),
        env=env,
    )
    assert res.returncode in (0, 1), res.stderr[-2000:]
    assert _leaks(res.stdout + res.stderr) == [], "terminal"
    for name in ("r.html", "r.xml", "r.md", "r.prom", "r.json"):
        assert _leaks((tmp / name).read_bytes()) == [], name
    assert _tree_leaks(out) == {}
    report = json.loads((tmp / "r.json").read_text())
    assert report["inputs"]["serving_logs"], "the planted inputs were audited"
    for how in (["--json", "-"], ["--markdown", "-"], ["--junit", "-"]):
        piped = audit("run", *common, *how, env=env)
        assert _leaks(piped.stdout + piped.stderr) == [], how


@pytest.mark.parametrize("as_tar", [False, True], ids=["dir", "tar.gz"])
def test_bundles_raw_bytes_and_replays(node, as_tar):
    tmp, root, env, inputs = node
    dest = tmp / ("b.tar.gz" if as_tar else "bdir")
    res = audit("collect", "--sysroot", str(root), *inputs, "-o", str(dest), env=env)
    assert res.returncode in (0, 1), res.stderr[-2000:]
    assert _leaks(res.stdout + res.stderr) == []
    if as_tar:
        assert _leaks(dest.read_bytes()) == []
        with tarfile.open(dest) as tf:
            members = [m for m in tf.getmembers() if m.isfile()]
            leaks = {m.name: _leaks(tf.extractfile(m).read()) for m in members}
        assert {k: v for k, v in leaks.items() if v} == {}
        assert len(members) > 10
    else:
        assert _tree_leaks(dest) == {}
        assert (dest / "inputs").is_dir()
    replay = audit("run", "--snapshot", str(dest), "--no-gate", "-v", "--json", "-", env=env)
    assert replay.returncode in (0, 1), replay.stderr[-2000:]
    assert _leaks(replay.stdout + replay.stderr) == []


@pytest.fixture
def processes():
    """Real processes whose command lines carry secrets (a python that calls itself mysql …)."""
    procs = [
        subprocess.Popen(
            [args[0], "-c", "import time; time.sleep(60)", *args[1:]],
            executable=sys.executable,
            stdin=subprocess.DEVNULL,
        )
        for args in PROCESS_ARGS
    ]
    time.sleep(0.5)
    yield {p.pid for p in procs}
    for p in procs:
        p.kill()
        p.wait()


def test_other_processes_command_lines_are_redacted_when_recorded(tmp_path, processes):
    pytest.importorskip("psutil", reason="the live process listing needs psutil")
    host = RecordingHost(LiveHost("/"))
    seen = [p for p in host.processes() if p.pid in processes]
    assert len(seen) == len(PROCESS_ARGS), "the planted processes are listed"
    assert all(p.cmdline for p in seen)
    assert _leaks(json.dumps([p.to_dict() for p in seen])) == []
    out = tmp_path / "bundle"
    host.write_bundle(str(out), {"name": "ascend-audit", "version": "test"})
    assert _tree_leaks(out) == {}
