"""Topology, tree kinematics, loop constraints, assembly, velocity and acceleration analysis."""

from .mechanism import Mechanism
from .topology import Topology, grubler_dof, spanning_tree

__all__ = ["Mechanism", "Topology", "grubler_dof", "spanning_tree"]
