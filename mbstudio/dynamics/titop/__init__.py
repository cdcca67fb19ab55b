"""TITOP block models (seed 004): one block per body, typed ports (motions and wrenches), inverse dynamics by
imposing every acceleration and forward dynamics by solving the interconnection's algebraic loop exactly.

    from mbstudio.dynamics.titop import block_model
    blocks = block_model(samples.load("balloon"))        # any tree document; closed loops with closure_frequency
    state = blocks.from_coordinates(q, qd)               # the document's coordinates (N, n) -> block state
    acc = blocks.forward_dynamics(state)                 # solver="condensed" (default) or "faithful"
    inv = blocks.inverse_dynamics(state, acc)            # efforts, base wrenches, joint reactions
    run = simulate_blocks(model, 10.0)                   # the block model's own motion (compiled right-hand side)
    check = cross_check(model, simulate(model, 10.0))   # error series block - general (the seed's Fig. 17)
"""

from .blocks import GROUND, Block, Body, Joint
from .cross_check import CLOSURE_FREQUENCY, CrossCheck, cross_check, recorded_efforts
from .floating_base import BaseState
from .from_document import block_model
from .interconnection import SOLVERS, BlockAccelerations, BlockModel, BlockState, InverseDynamics
from .loads import JointLaw, PointLoad, SpringLoad
from .simulation import BlockRun, simulate_blocks

__all__ = [
    "CLOSURE_FREQUENCY",
    "GROUND",
    "SOLVERS",
    "BaseState",
    "Block",
    "BlockAccelerations",
    "BlockModel",
    "BlockRun",
    "BlockState",
    "Body",
    "CrossCheck",
    "InverseDynamics",
    "Joint",
    "JointLaw",
    "PointLoad",
    "SpringLoad",
    "block_model",
    "cross_check",
    "recorded_efforts",
    "simulate_blocks",
]
