"""Identification of inertial parameters: regressor, observation matrix, base parameters."""

from .base_parameters import BaseParameters, gautier
from .observation import FourierPath, observation_matrix, sample_states
from .regressor import body_regressor, regressor, tree_regressor

__all__ = ["BaseParameters", "FourierPath", "body_regressor", "gautier", "observation_matrix", "regressor",
           "sample_states", "tree_regressor"]
