"""Command-line tools: `opt-tool` (opt_tool.py), with its diagnostics and output targets."""
