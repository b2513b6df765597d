"""Built-in checks, one module a concern, grouped by layer."""
