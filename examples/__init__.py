"""Bundled example node snapshots (`ascend-audit run --example NAME`)."""
