"""Linear analysis about operating points: static equilibria, state-space models in the independent
coordinates, their modes and frequency responses, families over a schedule (LPV), and python-control systems.

    from mbstudio.linear import equilibrium, linearize
    lin = linearize(model, equilibrium(model))
"""

from .equilibrium import equilibrium, operating_point
from .linear_model import LinearModel, linearize
from .modes import modes

__all__ = ["LinearModel", "equilibrium", "linearize", "modes", "operating_point"]
