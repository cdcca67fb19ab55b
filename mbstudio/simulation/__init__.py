"""Motions of a mechanism in time: simulation on the compiled engine (run.py) with its integrators, ensembles of
runs, the block models' own runs and their cross-check of a simulation, prescribed motions (the forces a given
path needs), and what is measured along any motion (measures, invariant monitors).

    from mbstudio.simulation import simulate
    run = simulate(model, 2.0)                  # CVODES on the compiled state equation; CVODES-BDF for contacts
"""

from .run import SimulationResult, simulate

__all__ = ["SimulationResult", "simulate"]
