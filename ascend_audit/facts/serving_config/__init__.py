"""Serving configuration parsers, one module a format: `argv` (vllm serve / api_server command
lines), `launch_script`, `vllm_yaml`, `option_json` (--additional-config), `args_dict` (logged
`non-default args:`), `mindie` (config.json), `config_file` (either file); the fact in `model`."""
