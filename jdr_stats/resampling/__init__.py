"""Resampling independent of the estimand: counts, Poisson weights, seeds,
workers and progress of the replicates.
"""
