"""The fit of K blocks and the results' members shared with the two-block fit:
pieces, the K-way sketch, streamed and sparse fits, premises.
"""
