"""Developer tools run with ``python -m tools.<name>`` (not installed with the package)."""
