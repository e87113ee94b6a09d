"""CLI commands of the pipeline stages, one module per stage (``command`` is registered by cli.py)."""
