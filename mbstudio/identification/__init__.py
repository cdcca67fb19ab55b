"""Identification of inertial parameters: regressor, observation matrix, base parameters."""

from .gautier import BaseParameterResult, compare_routes, gautier_dp, gautier_vp, ridge_study
from .observation import FourierPath, observation_matrix, sample_states
from .regressor import body_regressor, regressor, tree_regressor

__all__ = ["BaseParameterResult", "FourierPath", "body_regressor", "compare_routes", "gautier_dp", "gautier_vp",
           "observation_matrix", "regressor", "ridge_study", "sample_states", "tree_regressor"]
