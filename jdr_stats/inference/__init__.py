"""Inference for the joint estimator: rank tests and the bootstrap."""
