"""Built-in plugins: registered by the core on every run, without entry points (SPEC R3.3)."""
