"""Rendering of summaries: tables, text and HTML, and the blocks of a report.
"""
