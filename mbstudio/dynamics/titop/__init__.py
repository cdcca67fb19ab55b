"""TITOP block models (Alazard et al. 2024): one block per body, typed ports (motions and wrenches), inverse dynamics by
imposing every acceleration and forward dynamics by solving the interconnection's algebraic loop exactly.
Their simulation and the cross-check of a simulation against them are in mbstudio/simulation (block_runs.py,
cross_check.py).

    from mbstudio.dynamics.titop import block_model
    blocks = block_model(samples.load("balloon"))        # any tree document; closed loops with closure_frequency
    state = blocks.from_coordinates(q, qd)               # the document's coordinates (N, n) -> block state
    acc = blocks.forward_dynamics(state)                 # solver="condensed" (default) or "faithful"
    inv = blocks.inverse_dynamics(state, acc)            # efforts, base wrenches, joint reactions
"""

from .blocks import GROUND, Block, Body, Joint
from .closures import CLOSURE_FREQUENCY
from .floating_base import BaseState
from .from_document import block_model
from .interconnection import SOLVERS, BlockModel
from .loads import JointLaw, PointLoad, SpringLoad
from .states import BlockAccelerations, BlockState, InverseDynamics

__all__ = [
    "CLOSURE_FREQUENCY",
    "GROUND",
    "SOLVERS",
    "BaseState",
    "Block",
    "BlockAccelerations",
    "BlockModel",
    "BlockState",
    "Body",
    "InverseDynamics",
    "Joint",
    "JointLaw",
    "PointLoad",
    "SpringLoad",
    "block_model",
]
