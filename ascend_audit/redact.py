"""Redaction of secrets in environment values, command lines and free text, before evidence."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping

MASK = "***REDACTED***"

_SECRET_NAME = re.compile(
    r"(?:^|[_.-])(TOKEN|SECRET|PASSWORD|PASSWD|PASSPHRASE|API[_-]?KEY|ACCESS[_-]?KEY|"
    r"PRIVATE[_-]?KEY|CREDENTIALS?|AUTH|COOKIE|SESSION[_-]?ID|KEY)(?:$|[_.-])",
    re.IGNORECASE,
)
# Flags whose *next* argv element (or `=value`) is secret: --api-key, --token, --password, ...
_SECRET_FLAG = re.compile(
    r"^--?[\w-]*(token|secret|password|passwd|api[-_]?key|access[-_]?key|credential|auth)[\w-]*$",
    re.IGNORECASE,
)
_URL_USERINFO = re.compile(r"(?P<scheme>[a-zA-Z][\w+.-]*://)(?P<user>[^/\s:@]+):(?P<pw>[^/\s@]+)@")
_KV_SECRET = re.compile(
    # the secret word ends the key (`hf_token`, `db_password`), so counts such as
    # `total_token_throughput`, `max_tokens` or `tokenizer` are not masked
    r"(?P<key>\b[\w.-]*(?:token|secret|password|passwd|passphrase|api[_-]?key|access[_-]?key"
    r"|secret[_-]?key|private[_-]?key|auth)(?![\w.-]))"
    r"(?P<sep>[\"']?\s*[=:]\s*)(?P<q>[\"']?)(?P<val>[^\s\"'&,;]+)",
    re.IGNORECASE,
)
# `--api-key VALUE` / `--hf-token=VALUE` written out in text (a logged or pasted command line).
_FLAG_SECRET = re.compile(
    r"(?P<flag>(?<![\w-])--?[\w-]*(?:token|secret|password|passwd|api[-_]?key|access[-_]?key"
    r"|credential|auth)[\w-]*)(?P<sep>=|\s+)(?P<q>[\"']?)(?P<val>(?!-)[^\s\"',;]+)",
    re.IGNORECASE,
)
_BEARER = re.compile(r"(?i)\b(bearer|basic)\s+[A-Za-z0-9._~+/=-]{8,}")
# Well-known token shapes, redacted wherever they appear.
_TOKEN_SHAPES = re.compile(
    r"\b(hf_[A-Za-z0-9]{20,}|sk-[A-Za-z0-9_-]{20,}|ghp_[A-Za-z0-9]{20,}|gh[ousr]_[A-Za-z0-9]{20,}"
    r"|xox[abpr]-[A-Za-z0-9-]{10,}|AKIA[0-9A-Z]{16})\b"
)


def is_secret_name(name: str) -> bool:
    """True when an environment variable or key name suggests a secret value."""
    return bool(_SECRET_NAME.search(name))


def redact_text(text: str) -> str:
    """Mask secrets in free text: URL passwords, key=value pairs, bearer and known token shapes."""
    if not text:
        return text
    text = _URL_USERINFO.sub(lambda m: f"{m['scheme']}{m['user']}:{MASK}@", text)
    text = _BEARER.sub(lambda m: f"{m.group(1)} {MASK}", text)
    text = _FLAG_SECRET.sub(lambda m: f"{m['flag']}{m['sep']}{m['q']}{MASK}", text)
    text = _KV_SECRET.sub(lambda m: f"{m['key']}{m['sep']}{m['q']}{MASK}", text)
    return _TOKEN_SHAPES.sub(MASK, text)


def redact_env(env: Mapping[str, str]) -> dict[str, str]:
    """Copy of an environment with secret-looking values masked and the rest text-redacted."""
    return {k: (MASK if is_secret_name(k) and v else redact_text(v)) for k, v in env.items()}


def redact_argv(argv: Iterable[str]) -> list[str]:
    """Copy of a command line with values of secret flags masked (`--api-key X`, `--token=X`)."""
    out: list[str] = []
    mask_next = False
    for arg in argv:
        if mask_next:
            out.append(MASK)
            mask_next = False
            continue
        if arg.startswith("-") and "=" in arg:
            flag, _, _value = arg.partition("=")
            if _SECRET_FLAG.match(flag):
                out.append(f"{flag}={MASK}")
                continue
        elif _SECRET_FLAG.match(arg):
            out.append(arg)
            mask_next = True
            continue
        out.append(redact_text(arg))
    return out
