"""Redaction of tokens, keys and passwords in env, argv and text."""

from __future__ import annotations

from ascend_audit.redact import MASK, redact_argv, redact_env, redact_text


def test_env_secret_names_are_masked():
    env = redact_env(
        {
            "HF_TOKEN": "hf_x",
            "OPENAI_API_KEY": "sk-1",
            "DB_PASSWORD": "pw",
            "PATH": "/usr/bin",
            "ASCEND_HOME": "/usr/local/Ascend",
            "AWS_SECRET_ACCESS_KEY": "abc",
        }
    )
    assert env["HF_TOKEN"] == env["OPENAI_API_KEY"] == env["DB_PASSWORD"] == MASK
    assert env["AWS_SECRET_ACCESS_KEY"] == MASK
    assert env["PATH"] == "/usr/bin" and env["ASCEND_HOME"] == "/usr/local/Ascend"


def test_argv_secret_flags_are_masked():
    argv = [
        "vllm",
        "serve",
        "/models/q",
        "--api-key",
        "abc123",
        "--hf-token=hf_zzz",
        "--port",
        "8000",
    ]
    out = redact_argv(argv)
    assert "abc123" not in out and "--hf-token=hf_zzz" not in out
    assert out[:4] == ["vllm", "serve", "/models/q", "--api-key"]
    assert out[-2:] == ["--port", "8000"]


def test_text_urls_pairs_and_known_token_shapes():
    text = (
        "connect https://admin:s3cr3t@db.local/x password=hunter2 "
        "Authorization: Bearer abcdefghijklmnop token hf_AbCdEfGhIjKlMnOpQrStUvWx"
    )
    out = redact_text(text)
    for secret in ("s3cr3t", "hunter2", "abcdefghijklmnop", "hf_AbCdEfGhIjKlMnOpQrStUvWx"):
        assert secret not in out
    assert "https://admin:" in out and "db.local" in out


def test_plain_text_is_untouched():
    text = "npu-smi 24.1.rc1 Version: 24.1.rc1 | 910B3 | OK | 0000:C1:00.0"
    assert redact_text(text) == text
