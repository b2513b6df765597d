"""The framework probe: a script run in the serving interpreter, and the parser of its output."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

__all__ = [
    "PROBE_ENV",
    "PROBE_MARK",
    "PROBE_PACKAGES",
    "PROBE_SCRIPT",
    "ProbeFacts",
    "classify_import_error",
    "parse_probe_output",
]

PROBE_MARK = "@@ASCEND_AUDIT_PROBE@@"
PROBE_ENV = {"TORCH_DEVICE_BACKEND_AUTOLOAD": "0"}
PROBE_PACKAGES = (
    "torch",
    "torch_npu",
    "vllm",
    "vllm_ascend",
    "triton_ascend",
    "mindie",
    "mindie_llm",
    "transformers",
)

# Run as `python -I -c PROBE_SCRIPT [--deep]` with TORCH_DEVICE_BACKEND_AUTOLOAD=0.
# Must stay valid on Python 3.8: no match statements, no `X | Y` types, no str.removeprefix.
PROBE_SCRIPT = r'''
import json, os, platform, re, sys

MARK = "@@ASCEND_AUDIT_PROBE@@"
DEEP = "--deep" in sys.argv[1:]
LIMIT = 2000

# Whatever the imports print (torch_npu warnings, C++ logs) must not corrupt the JSON on stdout:
# point fd 1 at stderr and keep a private copy of the real stdout for the single result line.
try:
    sys.stdout.flush()
    OUT_FD = os.dup(1)
    os.dup2(2, 1)
except Exception:
    OUT_FD = None


def trunc(text, limit=LIMIT):
    text = str(text)
    return text if len(text) <= limit else text[:limit] + "...[truncated]"


def describe(exc):
    """Type and message of an exception and of the ones it was raised from."""
    parts, seen = [], set()
    while exc is not None and id(exc) not in seen and len(parts) < 5:
        seen.add(id(exc))
        parts.append(type(exc).__name__ + ": " + str(exc))
        exc = exc.__cause__ or exc.__context__
    return trunc(" <- ".join(parts))


def dist_version(names):
    try:
        from importlib import metadata
    except ImportError:
        metadata = None
    for name in names:
        try:
            if metadata is not None:
                return metadata.version(name)
            import pkg_resources
            return pkg_resources.get_distribution(name).version
        except Exception:
            continue
    return None


PACKAGES = {
    "torch": ["torch"],
    "torch_npu": ["torch-npu", "torch_npu"],
    "vllm": ["vllm"],
    "vllm_ascend": ["vllm-ascend", "vllm_ascend"],
    "triton_ascend": ["triton-ascend", "triton_ascend"],
    "mindie": ["mindie"],
    "mindie_llm": ["mindie-llm", "mindie_llm"],
    "transformers": ["transformers"],
}

result = {
    "probe": 1,
    "deep": DEEP,
    "python": {
        "version": platform.python_version(),
        "implementation": platform.python_implementation(),
        "executable": sys.executable,
        "machine": platform.machine(),
        "platform": sys.platform,
    },
    "packages": {},
    "errors": [],
    "identity": {
        "uid": getattr(os, "getuid", lambda: None)(),
        "gid": getattr(os, "getgid", lambda: None)(),
    },
}
for key, names in PACKAGES.items():
    try:
        result["packages"][key] = dist_version(names)
    except Exception as exc:
        result["packages"][key] = None
        result["errors"].append("metadata " + key + ": " + describe(exc))

# vllm-ascend's build target, read from its files without importing the package.
try:
    import importlib.util
    spec = importlib.util.find_spec("vllm_ascend")
    for loc in (spec.submodule_search_locations or []) if spec else []:
        path = os.path.join(loc, "_build_info.py")
        if os.path.isfile(path):
            with open(path, "r", errors="replace") as fh:
                text = fh.read(65536)
            info = {}
            for name in ("__device_type__", "__soc_version__"):
                m = re.search(name + r"\s*=\s*['\"]([^'\"]*)['\"]", text)
                info[name.strip("_")] = m.group(1) if m else None
            result["vllm_ascend_build"] = info
            break
except BaseException as exc:
    result["errors"].append("vllm_ascend build info: " + describe(exc))

torch_info = {"imported": False}
try:
    import torch
    torch_info["imported"] = True
    torch_info["version"] = str(getattr(torch, "__version__", ""))
    torch_info["cuda"] = getattr(getattr(torch, "version", None), "cuda", None)
except BaseException as exc:
    torch_info["error_type"] = type(exc).__name__
    torch_info["error"] = describe(exc)
result["torch"] = torch_info

npu_info = {"imported": False}
try:
    import torch_npu
    npu_info["imported"] = True
    npu_info["version"] = str(getattr(torch_npu, "__version__", ""))
    npu_info["git_version"] = getattr(getattr(torch_npu, "version", None), "git_version", None)
except BaseException as exc:
    npu_info["error_type"] = type(exc).__name__
    npu_info["error"] = describe(exc)
result["torch_npu"] = npu_info

if DEEP and npu_info["imported"]:
    deep = {}
    npu = getattr(torch, "npu", None)
    try:
        deep["is_available"] = bool(npu.is_available())
    except BaseException as exc:
        deep["is_available_error"] = describe(exc)
    count = 0
    try:
        count = int(npu.device_count())
        deep["device_count"] = count
    except BaseException as exc:
        deep["device_count_error"] = describe(exc)
    names, mems = [], []
    for i in range(min(count, 64)):
        try:
            names.append(str(npu.get_device_name(i)))
        except BaseException as exc:
            names.append(None)
            deep["device_name_error"] = describe(exc)
        try:
            free, total = npu.mem_get_info(i)
            mems.append([int(free), int(total)])
        except BaseException as exc:
            mems.append(None)
            deep["mem_get_info_error"] = describe(exc)
    deep["device_names"] = names
    deep["mem_get_info"] = mems
    try:
        from torch_npu.npu.utils import get_cann_version
        deep["cann_version"] = str(get_cann_version("CANN"))
        deep["driver_version"] = str(get_cann_version("DRIVER"))
    except BaseException as exc:
        deep["cann_version_error"] = describe(exc)
    result["npu"] = deep

line = MARK + json.dumps(result, default=str) + "\n"
if OUT_FD is not None:
    os.write(OUT_FD, line.encode("utf-8", "replace"))
else:
    sys.stdout.write(line)
    sys.stdout.flush()
'''

_CANN_LIBS = ("libhccl.so", "libascendcl.so", "libascend_hal.so", "libatb.so")
_LIB_RE = re.compile(r"(lib[\w.+-]*?\.so)[\w.]*: cannot open shared object file")
_NOT_INSTALLED_RE = re.compile(r"No module named '(torch_npu|torch)'")


@dataclass(frozen=True)
class ProbeFacts:
    """What the serving interpreter reports about itself, its packages and torch_npu."""

    ran: bool = False  # the probe printed its JSON
    rc: int | None = None
    timed_out: bool = False
    python_version: str | None = None
    implementation: str | None = None
    executable: str | None = None
    machine: str | None = None
    packages: tuple[tuple[str, str | None], ...] = ()
    torch_version: str | None = None
    torch_cuda: str | None = None
    torch_import_error: str | None = None
    torch_npu_status: str = (
        "unknown"  # ok|cann_missing|torch_mismatch|cuda_torch|not_installed|other
    )
    torch_npu_version: str | None = None
    torch_npu_git_version: str | None = None
    import_error_type: str | None = None
    import_error: str | None = None
    missing_library: str | None = None
    build_device_type: str | None = None
    build_soc_version: str | None = None
    deep: bool = False
    is_available: bool | None = None
    device_count: int | None = None
    device_names: tuple[str | None, ...] = ()
    mem_info: tuple[tuple[int, int] | None, ...] = ()  # (free_bytes, total_bytes) per device
    cann_version: str | None = None
    driver_version: str | None = None
    stderr_tail: str = ""
    problems: tuple[str, ...] = ()

    def package(self, name: str) -> str | None:
        """Installed version of one probed package (keys as in PROBE_PACKAGES), or None."""
        return dict(self.packages).get(name)

    def to_dict(self) -> dict[str, Any]:
        """JSON-serialisable form."""
        out: dict[str, Any] = {}
        for name in self.__dataclass_fields__:
            value = getattr(self, name)
            if name == "packages":
                out[name] = dict(value)
            elif name == "mem_info":
                out[name] = [list(m) if m else None for m in value]
            elif isinstance(value, tuple):
                out[name] = list(value)
            else:
                out[name] = value
        return out


def classify_import_error(
    message: str | None, torch_npu_installed: bool = True
) -> tuple[str, str | None]:
    """Classify an `import torch_npu` failure; returns (status, missing library or None)."""
    if not message:
        return "other", None
    m = _NOT_INSTALLED_RE.search(message)
    if m or (not torch_npu_installed and "ModuleNotFoundError" in message):
        return "not_installed", None
    if "Two accelerators" in message:
        return "cuda_torch", None
    lib = _LIB_RE.search(message)
    if lib and lib.group(1) in _CANN_LIBS:
        return "cann_missing", lib.group(1)
    if "set_env.sh" in message:
        return "cann_missing", lib.group(1) if lib else None
    if "undefined symbol" in message and re.search(r"libtorch_npu|torch_npu/_C|libtorch", message):
        return "torch_mismatch", None
    return "other", lib.group(1) if lib else None


def _s(v: Any) -> str | None:
    return v if isinstance(v, str) and v else None


def _find_json(stdout: str) -> tuple[dict[str, Any] | None, str | None]:
    """The probe's JSON object from stdout: after the marker, else the last `{` line."""
    candidates: list[str] = []
    idx = stdout.rfind(PROBE_MARK)
    if idx >= 0:
        candidates.append(stdout[idx + len(PROBE_MARK) :].split("\n", 1)[0])
    else:
        candidates.extend(
            ln for ln in reversed(stdout.splitlines()[-50:]) if ln.lstrip().startswith("{")
        )
    error = None
    for c in candidates:
        try:
            data = json.loads(c)
        except (ValueError, RecursionError) as exc:
            error = str(exc)
            continue
        if isinstance(data, dict):
            return data, None
        error = "not a JSON object"
    return None, error


def parse_probe_output(
    stdout: str | bytes | None, stderr: str | bytes | None, rc: int | None, timed_out: bool
) -> ProbeFacts:
    """Turn the probe's stdout/stderr/exit status into ProbeFacts; never raises."""
    try:
        return _parse(stdout, stderr, rc, timed_out)
    except Exception as exc:  # defensive: odd JSON shapes must not crash the audit
        return ProbeFacts(
            rc=rc, timed_out=bool(timed_out), problems=(f"probe output unreadable: {exc}",)
        )


def _text(v: str | bytes | None) -> str:
    if isinstance(v, (bytes, bytearray)):
        return bytes(v).decode("utf-8", errors="replace")
    return v if isinstance(v, str) else ""


def _parse(stdout: Any, stderr: Any, rc: int | None, timed_out: bool) -> ProbeFacts:
    out, err = _text(stdout), _text(stderr)
    tail = err[-2000:]
    problems: list[str] = []
    rc = rc if isinstance(rc, int) and not isinstance(rc, bool) else None
    if timed_out:
        problems.append("the probe timed out: the interpreter hung (or an import blocked)")
    data, error = _find_json(out) if out.strip() else (None, None)
    if data is None:
        if not timed_out:
            if "SyntaxError" in err:
                problems.append("the interpreter could not run the probe (Python older than 3.8?)")
            elif not out.strip():
                problems.append(f"the probe printed nothing (exit status {rc})")
            else:
                snippet = out.strip()[:120].replace("\n", " ")
                problems.append(
                    f"the probe printed no JSON ({error or 'no JSON line'}): {snippet!r}"
                )
        return ProbeFacts(
            rc=rc, timed_out=bool(timed_out), stderr_tail=tail, problems=tuple(problems)
        )
    if rc not in (0, None):
        problems.append(f"the probe exited with status {rc}")

    def section(name: str) -> dict[str, Any]:
        v = data.get(name)
        return v if isinstance(v, dict) else {}

    py, pk, tinfo, ninfo = (
        section("python"),
        section("packages"),
        section("torch"),
        section("torch_npu"),
    )
    build = section("vllm_ascend_build")
    packages = tuple((k, _s(pk.get(k))) for k in PROBE_PACKAGES)
    installed = dict(packages).get("torch_npu") is not None
    if ninfo.get("imported") is True:
        status, lib = "ok", None
    elif not ninfo:
        status, lib = "unknown", None
        problems.append("the probe did not report on torch_npu")
    else:
        status, lib = classify_import_error(_s(ninfo.get("error")), installed)
    for e in data.get("errors") or []:
        problems.append(f"probe: {str(e)[:200]}")

    deep = section("npu")
    names: list[Any] = deep["device_names"] if isinstance(deep.get("device_names"), list) else []
    mems_raw: list[Any] = deep["mem_get_info"] if isinstance(deep.get("mem_get_info"), list) else []
    mems: list[tuple[int, int] | None] = []
    for m in mems_raw:
        ok = isinstance(m, list) and len(m) == 2 and all(isinstance(x, int) for x in m)
        mems.append((m[0], m[1]) if ok else None)
    for key in (
        "is_available_error",
        "device_count_error",
        "mem_get_info_error",
        "cann_version_error",
    ):
        if key in deep:
            problems.append(f"{key.replace('_error', '')}: {str(deep[key])[:200]}")
    count = deep.get("device_count")
    avail = deep.get("is_available")
    return ProbeFacts(
        ran=True,
        rc=rc,
        timed_out=bool(timed_out),
        python_version=_s(py.get("version")),
        implementation=_s(py.get("implementation")),
        executable=_s(py.get("executable")),
        machine=_s(py.get("machine")),
        packages=packages,
        torch_version=_s(tinfo.get("version")),
        torch_cuda=_s(tinfo.get("cuda")),
        torch_import_error=_s(tinfo.get("error")),
        torch_npu_status=status,
        torch_npu_version=_s(ninfo.get("version")),
        torch_npu_git_version=_s(ninfo.get("git_version")),
        import_error_type=_s(ninfo.get("error_type")),
        import_error=_s(ninfo.get("error")),
        missing_library=lib,
        build_device_type=_s(build.get("device_type")),
        build_soc_version=_s(build.get("soc_version")),
        deep=data.get("deep") is True,
        is_available=avail if isinstance(avail, bool) else None,
        device_count=count if isinstance(count, int) and not isinstance(count, bool) else None,
        device_names=tuple(n if isinstance(n, str) else None for n in names),
        mem_info=tuple(mems),
        cann_version=_s(deep.get("cann_version")),
        driver_version=_s(deep.get("driver_version")),
        stderr_tail=tail,
        problems=tuple(p[:300] for p in problems[:100]),
    )
