"""What every layer uses: argument validation, warnings attributed to the
caller, lazy imports of heavy modules, atomic file writes.
"""
