"""The two-block estimate: moments and whitenings to directions, the joint
estimator's rows, the fit's settings.
"""
