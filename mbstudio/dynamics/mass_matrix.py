"""The mass matrix M(q) of the tree by the composite-rigid-body algorithm.

In world axes at the world origin a composite body's inertia is the plain sum of its bodies' inertias, so the
inward pass only adds; then for each node k the force F = I^c_k s_k that moving k alone needs gives the
column entries M[j, k] = s_jᵀ F for the nodes j on k's path to the ground (all others are zero).
"""

from __future__ import annotations

import numpy as np

from ..kinematics.mechanism import Mechanism
from .spatial_tree import axes, node_inertias, nodes, samples_first


def mass_matrix(mech: Mechanism, q) -> np.ndarray:
    """M(q) (N, n, n), symmetric, for q (N, n) or (n,), in the tree coordinates' order."""
    b, tree = mech.backend, mech.tree
    with b.context():
        q = mech.as_batch(q)
        st = tree.motion(q)
        S, tn = axes(tree, st), nodes(tree)
        composite = node_inertias(mech, st, tn)
        for k in reversed(tn.order):
            p = tn.parent[k]
            if p >= 0 and composite[k] is not None:
                composite[p] = composite[k] if composite[p] is None else composite[p] + composite[k]
        M = b.zeros((mech.n, mech.n, q.shape[0]))
        for k in tn.order:
            if composite[k] is None:
                continue
            path = list(tn.path[k])
            column = (S[path] * composite[k].apply(S[k])[None]).sum(axis=1)
            M[path, k] = column
            M[k, path] = column
        return samples_first(M)
