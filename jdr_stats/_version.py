"""The package version (one place; ``jdr_stats.__version__`` re-exports it)."""

__version__ = "0.1.0"
