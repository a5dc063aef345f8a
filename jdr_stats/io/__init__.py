"""The model's inputs: arrays, DataFrames, formulas, responses and covariates,
their validation into the model's data over K blocks, streamed data.
"""
