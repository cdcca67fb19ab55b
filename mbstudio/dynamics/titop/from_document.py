"""A document (.mbs) as a TITOP block model, with no extra input: one block per body of the spanning tree,
joints as blocks, the force elements as loads, the cut joints of closed loops as stiff spring-dampers
(closures.py).

- A free_euler joint from the ground is a floating base: its block frame is the joint's child frame, its inertial
  frame R_i the joint's parent frame, its Euler angles the joint's (ψ, θ, φ).
- A revolute or prismatic joint is one joint block; a fixed joint a weld.
- A joint of several motions (universal, spherical, cylindrical, planar, or a free_euler joint below another
  body) is a chain of one-degree-of-freedom blocks through massless frames: only the condensed solve takes those.
- Ball and free joints, which turn by rotation parameters rather than about axes, have no block: refused, as
  are couplings.
- Every other body's block frame is its own frame, so its points and inertia are the document's.
"""

from __future__ import annotations

import numpy as np

from ...kinematics.geometry import FrameValue
from ...kinematics.mechanism import Mechanism
from ...model.document import Model, body_key
from ...model.errors import ModelError
from ..forces import AppliedForces
from .blocks import GROUND, Block, Body, Joint
from .closures import closure_loads
from .interconnection import BlockModel
from .loads import JointLaw, PointLoad, SpringLoad
from .motion import identity


def block_model(model: Model | Mechanism, backend=None, closure_frequency: float | None = None) -> BlockModel:
    """The document's block model in `backend` (default float64; a Mechanism brings its own). A closed loop's
    cut joints become spring-dampers whose stiffness puts the closure's own frequency at `closure_frequency`
    (Hz; closures.py); without one a closed loop is refused."""
    mech = model if isinstance(model, Mechanism) else Mechanism(model, backend=backend)
    tree, b = mech.tree, mech.backend
    if mech.model.couplings:
        raise ModelError(
            "couplings",
            "couple coordinates, which the block models' joints cannot (no block holds a gear or a mimic joint)",
            [c.name for c in mech.model.couplings],
            "a model without couplings for a block model",
        )
    frames = [_block_frame(tree, i) for i in range(len(tree.body_labels))]
    blocks: list[Block] = []
    block_of = {0: GROUND}  # body index -> the block carrying it
    for link in tree.links:
        blocks += _link_blocks(mech, link, frames, block_of[link.parent], len(blocks))
        block_of[link.child] = len(blocks) - 1
    where = _Places(mech, frames, blocks, block_of)
    forces = AppliedForces(mech)  # the document's elements and its coordinates' compliant stops
    loads = [law.block_load(where) for law in forces.laws]
    if tree.topology.cut:
        if closure_frequency is None:
            raise ModelError(
                "closure_frequency",
                f"the mechanism has closed loops (cut joints {', '.join(j.name for j in tree.topology.cut)}); "
                "a block model closes them with stiff spring-dampers (Alazard et al. 2024, §3.4), whose frequency "
                "is not given",
                None,
                "a closure frequency in Hz, well above the mechanism's own (e.g. 200)",
            )
        loads += closure_loads(mech, where, closure_frequency)
    return BlockModel(blocks, tree.geometry.gravity(), loads, b, mech.model.name)


def _is_floating(link) -> bool:
    return link.joint.type == "free_euler" and link.parent == 0 and all(p.sign == 1 for p in link.primitives)


def _block_frame(tree, body: int) -> FrameValue:
    """A body's block frame in its own coordinates: a floating base's free-joint child frame, else its own."""
    for link in tree.links:
        if link.child == body and _is_floating(link):
            return link.after
    return FrameValue(identity(tree.backend.zeros(3)), tree.backend.zeros(3))


def _body(mech: Mechanism, body: int, frame: FrameValue, point: np.ndarray) -> Body:
    """The document's inertia (m, m c, J about the body origin) as mass, centre of mass and inertia about it
    in the block frame, with the reference point P (body coordinates)."""
    tree = mech.tree
    label = tree.body_labels[body]
    m, mx, my, mz, xx, xy, xz, yy, yz, zz = tree.geometry.inertia(mech.model.body(label))
    J = np.array([[xx, xy, xz], [xy, yy, yz], [xz, yz, zz]], dtype=np.asarray(m).dtype)
    first = np.array([mx, my, mz], dtype=J.dtype)
    com = first / m if m != 0 else 0 * first
    I_com = J - m * ((com * com).sum() * identity(J) - com[:, None] * com[None, :])
    R, o = frame.rotation, frame.origin
    return Body(label, m, R.T @ (com - o), R.T @ I_com @ R, R.T @ (point - o))


def _massless(name: str, b) -> Body:
    return Body(name, b.scalar(0), b.zeros(3), b.zeros((3, 3)), b.zeros(3))


def _link_blocks(mech: Mechanism, link, frames: list[FrameValue], parent: int, first: int) -> list[Block]:
    """The blocks of one tree joint: a floating base, a weld, or a chain of revolute and prismatic blocks."""
    tree, b = mech.tree, mech.backend
    joint, before, after = link.joint, link.before, link.after
    names = tuple(tree.coordinates[p.coordinate] for p in link.primitives)
    if any(p.kind == "B" for p in link.primitives):
        raise ModelError(
            f"joint '{joint.name}'.type",
            "turns by rotation parameters, which the block models' joints do not take",
            joint.type,
            "free_euler or spherical (Euler angles) for a block model",
        )
    if _is_floating(link):
        child = _body(mech, link.child, frames[link.child], after.origin)
        return [Block(child, Joint(joint.name, "floating", GROUND, before.origin, before.rotation, None, names))]
    Rp, Rc = frames[link.parent].rotation, frames[link.child].rotation
    port = Rp.T @ (before.origin - frames[link.parent].origin)
    start, end = Rp.T @ before.rotation, after.rotation.T @ Rc  # joint frame in the parent's; child's in joint's
    child = _body(mech, link.child, frames[link.child], after.origin)
    if not link.primitives:
        return [Block(child, Joint(joint.name, "weld", parent, port, start @ end))]
    out, one = [], identity(port)
    for i, prim in enumerate(link.primitives):
        first_one, last = i == 0, i == len(link.primitives) - 1
        axis = b.zeros(3)
        axis[prim.axis] = b.scalar(prim.sign)
        body = child if last else _massless(f"{joint.name}.{names[i]}", b)
        out.append(
            Block(
                body,
                Joint(
                    joint.name,
                    "revolute" if prim.kind == "R" else "prismatic",
                    parent if first_one else first + i - 1,
                    port if first_one else b.zeros(3),
                    (start if first_one else one) @ (end if last else one),
                    end.T @ axis if last else axis,
                    (names[i],),
                ),
            )
        )
    return out


class _Places:
    """Where a document body's point is in the block model: its block and the offset from the block's P; and the
    loads a force law asks for there (`ForceLaw.block_load`), so that the laws need not import the block models."""

    joint_law, point_load, spring_load = JointLaw, PointLoad, SpringLoad

    def __init__(self, mech: Mechanism, frames: list[FrameValue], blocks: list[Block], block_of: dict) -> None:
        self.mech, self.frames, self.blocks, self.block_of = mech, frames, blocks, block_of

    def block(self, label: str) -> int:
        return self.block_of[self.mech.tree.body_index(label)]

    def offset(self, label: str, point: np.ndarray) -> np.ndarray:
        """A point given in the body's coordinates, from its block's P in block axes (inertial for the ground)."""
        body = self.mech.tree.body_index(label)
        frame = self.frames[body]
        local = frame.rotation.T @ (point - frame.origin)
        block = self.block_of[body]
        return local if block == GROUND else local - self.blocks[block].body.point

    def named(self, label: str, point: str) -> tuple[int, np.ndarray]:
        """(block, offset) of a body's named point."""
        geometry = self.mech.tree.geometry
        return self.block(label), self.offset(label, geometry.point(self.mech.model.body(body_key(label)), point))
