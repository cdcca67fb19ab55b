"""Identification of inertial parameters: regressor, observation matrix, base parameters."""

from ..dynamics.regressor import body_regressor, regressor, tree_regressor
from .estimation import Estimate, estimate, least_squares, weighted_least_squares
from .excitation import Excitation, optimise_excitation
from .gautier import BaseParameterResult, compare_routes, gautier_dp, gautier_vp, ridge_study
from .observation import FourierPath, observation_matrix, sample_states

__all__ = [
    "BaseParameterResult",
    "Estimate",
    "Excitation",
    "estimate",
    "least_squares",
    "optimise_excitation",
    "weighted_least_squares",
    "FourierPath",
    "body_regressor",
    "compare_routes",
    "gautier_dp",
    "gautier_vp",
    "observation_matrix",
    "regressor",
    "ridge_study",
    "sample_states",
    "tree_regressor",
]
