"""Exports and safe persistence of results: dictionaries, strict JSON, the
allow-listed results format.
"""
