"""The one redactor: every recorded or reported text passes here before it becomes evidence.

Secrets are recognised by their shape as well as by their name, in any syntax a node writes:
PEM private-key blocks, JWTs, `Authorization:` and cookie headers, URL userinfo, well-known
token prefixes (hf_, sk-, ghp_, glpat-, xox?-, AWS access keys), and the value after a
secret-like key (password, passwd, pwd, pass, secret, token, key, sk, auth, credential …) in
`k=v`, `k: "quoted value"`, YAML block scalars, JSON, Python reprs (`'api_key': ['…']`) and
command lines (`--password X`, `--requirepass X`, `-pX`, `-p X`, `-u user:pass`).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping

MASK = "***REDACTED***"

# What `collect` records of the audit's environment (and what `host.env()` answers): the
# variables checks read, by prefix or exact name. Anything else is never recorded.
ENV_ALLOWLIST_PREFIXES = (
    "ASCEND_",
    "HCCL_",
    "HCCN_",
    "VLLM_",
    "MINDIE_",
    "MIES_",
    "PYTORCH_NPU_",
    "TORCH_NPU_",
    "TASK_QUEUE_",
    "OMP_",
    "LD_",
    "ATB_",
    "ASDOPS_",
    "NPU_",
    "CANN_",
)
ENV_ALLOWLIST_NAMES = frozenset(
    {
        "container",
        "RANK_TABLE_FILE",
        "RANKTABLEFILE",
        "DISAGGREGATED_PREFILL_RANK_TABLE_PATH",
        "TORCH_DEVICE_BACKEND_AUTOLOAD",
        "TOOLCHAIN_HOME",
        "WORLD_SIZE",
        "RANK",
        "LOCAL_RANK",
        "MASTER_ADDR",
        "MASTER_PORT",
    }
)


def env_allowed(name: str) -> bool:
    """True when an environment variable is one the checks read (see ENV_ALLOWLIST_*)."""
    return name in ENV_ALLOWLIST_NAMES or name.startswith(ENV_ALLOWLIST_PREFIXES)


# --- names --------------------------------------------------------------------------------------
# A key is secret when it ends in one of these words at a word boundary (start, `_ . -`, or a
# lower→upper camelCase step): `db_password`, `tlsPkPwd`, `HF_TOKEN`, `obs.sk` — not `bypass`,
# `max_tokens`, `tokenizer` or `total_token_throughput`.
_WORDS = (
    r"password|passwd|passphrase|pwd|pass|secret|token|apikey|api[_-]?key|key|sk|auth"
    r"|authorization|credentials?|cookie|session[_-]?id|private[_-]?key"
)
_NAME_END = re.compile(
    rf"(?:^|[_.\-\s]|(?<=[a-z0-9])(?=[A-Z]))(?:{_WORDS})$",
    re.IGNORECASE,
)
_CAMEL_END = re.compile(r"(?<=[a-z0-9])(?:Password|Passwd|Pwd|Pass|Secret|Token|Key|Sk|Auth)$")


def is_secret_name(name: str) -> bool:
    """True when an environment variable or key name suggests a secret value."""
    n = name.strip().strip("'\"")
    if not n or len(n) > 80:
        return False
    return bool(_NAME_END.search(n) or _CAMEL_END.search(n))


# --- shapes -------------------------------------------------------------------------------------
_PEM = re.compile(
    r"-----BEGIN ((?:[A-Z0-9]+ )*PRIVATE KEY)-----.*?(?:-----END \1-----|\Z)", re.DOTALL
)
_JWT = re.compile(r"\beyJ[A-Za-z0-9_-]{6,}\.[A-Za-z0-9_-]{6,}\.[A-Za-z0-9_-]{0,}")
_AUTH_HEADER = re.compile(
    r"(?im)\b((?:proxy-)?authorization\s*[:=]\s*)([\"']?)(?:(bearer|basic|token|digest|negotiate)\s+)?"
    r"([^\s\"']+)"
)
_BEARER = re.compile(r"(?i)\b(bearer|basic|token)\s+([A-Za-z0-9._~+/=-]{12,})")
_COOKIE = re.compile(r"(?im)\b((?:set-)?cookie\s*:\s*)([^\r\n]+)")
_URL_USERINFO = re.compile(
    r"(?P<scheme>\b[a-zA-Z][\w+.-]*://)(?P<user>[^/\s:@\"']*):(?P<pw>[^/\s@\"']+)@"
)
_TOKEN_SHAPES = re.compile(
    r"(?<![A-Za-z0-9])(hf_[A-Za-z0-9]{20,}|sk-[A-Za-z0-9_-]{20,}|gh[pousr]_[A-Za-z0-9]{20,}"
    r"|github_pat_[A-Za-z0-9_]{20,}|glpat-[A-Za-z0-9_-]{20,}|xox[abpres]-[A-Za-z0-9-]{10,}"
    r"|(?:AKIA|ASIA)[0-9A-Z]{16}|AIza[0-9A-Za-z_-]{35})(?![A-Za-z0-9])"
)

# --- key → value ----------------------------------------------------------------------------------
# key, then `=` or `:` (with optional quotes around the key), then a value: quoted (spaces and
# escaped quotes allowed), a bracketed list of quoted strings, or a bare run of characters.
_KEY = (
    r"(?P<key>(?<![\w.\-])[\"']?(?P<name>(?:[A-Za-z_][\w.\-]{0,60}?)?(?i:" + _WORDS + r"))[\"']?)"
)
_KV = re.compile(
    _KEY + r"(?P<sep>\s*(?::|=|:=)\s*)"
    r"(?P<val>\"(?:[^\"\\\n]|\\.)*\"|'(?:[^'\\\n]|\\.)*'|\[[^\]\n]*\]|\(\s*['\"][^)\n]*\)"
    r"|[|>][+-]?[ \t]*(?=\n)|[^\s\"',;&)}\]]+)"
)
_KEEP_VALUES = re.compile(r"^(?:true|false|yes|no|on|off|null|none|nil|~|\d{1,4}|[-*]+)$", re.I)
_QUOTED = re.compile(r"\"(?:[^\"\\]|\\.)*\"|'(?:[^'\\]|\\.)*'")

# command-line flags whose value is secret: --password X, --requirepass X, --api-key=X …
_FLAG_NAME = re.compile(
    r"^--?[\w.-]*?(?:password|passwd|passphrase|pwd|pass|secret|token|api[-_]?key|access[-_]?key"
    r"|secret[-_]?key|credentials?|auth|cookie)$",
    re.IGNORECASE,
)
_FLAG_TEXT = re.compile(
    r"(?P<flag>(?<![\w-])--?[\w.-]*?(?:password|passwd|passphrase|pwd|pass|secret|token"
    r"|api[-_]?key|access[-_]?key|credentials?|auth)(?![\w-]))"
    r"(?P<sep>=|\s+)(?P<val>\"[^\"\n]*\"|'[^'\n]*'|(?!-)[^\s\"',;]+)",
    re.IGNORECASE,
)
_P_ATTACHED = re.compile(r"(?<![\w-])-p(?P<val>[^\s\d\"'-][^\s\"']{3,})")
_P_SPACED = re.compile(r"(?<![\w-])(?P<flag>-p)\s+(?P<val>(?![-\d])[^\s\"']{4,})")
_U_USERPASS = re.compile(
    r"(?<![\w-])(?P<flag>-u|--user)(?P<sep>\s+|=)(?P<user>[^\s:\"']+):(?P<pw>[^\s\"']+)"
)
_DB_CLIENTS = ("mysql", "mariadb", "mysqldump", "mysqladmin", "sshpass", "redis-cli", "psql")


def _mask_value(val: str) -> str:
    if val[:1] in "\"'":
        return f"{val[0]}{MASK}{val[0]}"
    if val[:1] == "[":
        return "[" + ", ".join(f"'{MASK}'" for _ in _QUOTED.findall(val) or [0]) + "]"
    if val[:1] == "(":
        return f"('{MASK}')"
    return MASK


def _kv(m: re.Match[str]) -> str:
    name, val = m["name"], m["val"]
    if not is_secret_name(name):
        return m.group(0)
    bare = val.strip("\"'")
    if not bare or _KEEP_VALUES.match(bare) or bare == MASK or MASK in bare:
        return m.group(0)
    # a `*key` naming a file (tls_key: /etc/ssl/x.pem) is a path, not the key itself
    if re.search(r"key$", name, re.I) and bare.startswith("/") and " " not in bare:
        return m.group(0)
    if val[:1] in "|>":
        return m.group(0)  # the block scalar's lines are masked by _block_scalars
    return f"{m['key']}{m['sep']}{_mask_value(val)}"


def _block_scalars(text: str) -> str:
    """Mask the indented lines of a YAML block scalar under a secret key (`password: |`)."""
    if "|" not in text and ">" not in text:
        return text
    lines = text.split("\n")
    out: list[str] = []
    i = 0
    head = re.compile(r"^(?P<ind>\s*)(?:-\s+)?[\"']?(?P<name>[\w.\-]+)[\"']?\s*:\s*[|>][+-]?\s*$")
    while i < len(lines):
        line = lines[i]
        out.append(line)
        m = head.match(line)
        i += 1
        if not m or not is_secret_name(m["name"]):
            continue
        ind = len(m["ind"])
        while i < len(lines) and (
            not lines[i].strip() or len(lines[i]) - len(lines[i].lstrip()) > ind
        ):
            if lines[i].strip():
                pad = lines[i][: len(lines[i]) - len(lines[i].lstrip())]
                out.append(pad + MASK)
            else:
                out.append(lines[i])
            i += 1
    return "\n".join(out)


def redact_text(text: str) -> str:
    """Mask secrets in free text by shape and by the key or flag they follow."""
    if not text:
        return text
    text = _PEM.sub(lambda m: f"-----BEGIN {m.group(1)}-----{MASK}-----END {m.group(1)}-----", text)
    text = _JWT.sub(MASK, text)
    text = _COOKIE.sub(lambda m: f"{m.group(1)}{MASK}", text)
    text = _AUTH_HEADER.sub(
        lambda m: f"{m.group(1)}{m.group(2)}{m.group(3) + ' ' if m.group(3) else ''}{MASK}", text
    )
    text = _BEARER.sub(lambda m: f"{m.group(1)} {MASK}", text)
    text = _URL_USERINFO.sub(lambda m: f"{m['scheme']}{m['user']}:{MASK}@", text)
    text = _U_USERPASS.sub(lambda m: f"{m['flag']}{m['sep']}{m['user']}:{MASK}", text)
    text = _FLAG_TEXT.sub(lambda m: f"{m['flag']}{m['sep']}{_mask_value(m['val'])}", text)
    text = _block_scalars(text)
    text = _KV.sub(_kv, text)
    if "-p" in text:
        text = _P_ATTACHED.sub(f"-p{MASK}", text)
        if any(c in text for c in _DB_CLIENTS):
            text = _P_SPACED.sub(lambda m: f"{m['flag']} {MASK}", text)
    return _TOKEN_SHAPES.sub(MASK, text)


def redact_env(env: Mapping[str, str]) -> dict[str, str]:
    """Copy of an environment with secret-looking values masked and the rest text-redacted."""
    return {k: (MASK if is_secret_name(k) and v else redact_text(v)) for k, v in env.items()}


def allowed_env(env: Mapping[str, str]) -> dict[str, str]:
    """The allowlisted part of an environment, redacted: what may be recorded or reported."""
    return redact_env({k: v for k, v in env.items() if env_allowed(k)})


def redact_argv(argv: Iterable[str]) -> list[str]:
    """Copy of a command line with secret values masked: `--api-key X`, `--token=X`,
    `--requirepass X`, `-pX` / `-p X` (database clients), `-u user:pass`, and any shape."""
    args = [str(a) for a in argv]
    prog = args[0].rsplit("/", 1)[-1] if args else ""
    db_client = prog.startswith(_DB_CLIENTS)
    out: list[str] = []
    mask_next = False
    user_next = False
    for arg in args:
        if mask_next:
            out.append(MASK)
            mask_next = False
            continue
        if user_next:
            user_next = False
            if ":" in arg:
                out.append(arg.split(":", 1)[0] + ":" + MASK)
                continue
        if arg.startswith("-") and "=" in arg:
            flag, _, value = arg.partition("=")
            if _FLAG_NAME.match(flag) and value:
                out.append(f"{flag}={MASK}")
                continue
        elif _FLAG_NAME.match(arg):
            out.append(arg)
            mask_next = True
            continue
        elif arg in ("-u", "--user"):
            out.append(arg)
            user_next = True
            continue
        elif db_client and arg == "-p":
            out.append(arg)
            mask_next = True
            continue
        elif (db_client or not arg[2:3].isdigit()) and re.match(r"^-p[^\s-]{4,}$", arg):
            out.append(f"-p{MASK}")
            continue
        out.append(redact_text(arg))
    return out
