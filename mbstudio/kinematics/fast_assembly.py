"""Assembly of one configuration on the compiled loop equations, for the window's sliders.

The compiled engine files its loop closure and velocity map under the model's hash (numerics/compiled.engine_key);
this loads them without tracing anything, so the window can switch to them as soon as a background job has built
the engine. A slider step is then a first-order prediction along R and a few Newton steps, each one native call
(SLA: 0.1 ms instead of the numpy path's 2.6 ms).
"""

from __future__ import annotations

import numpy as np

from ..model.errors import AssemblyError
from ..numerics.compiled import FastCall, engine_key, filed_functions
from .mechanism import Mechanism

NEWTON_STEPS = 20
ROUNDING_FLOOR = 1e3  # x the tolerance: a Newton stalled this close is at float64's rounding


class FastAssembly:
    def __init__(self, mech: Mechanism, closure, r_matrix) -> None:
        self.mech = mech
        self.closure, self.r_matrix = FastCall(closure), FastCall(r_matrix)
        self.ind, self.dep = list(mech.partition.independent), list(mech.partition.dependent)
        self.tol = 1e-12 * mech.length_scale

    @classmethod
    def load(cls, mech: Mechanism, model_text: str) -> FastAssembly | None:
        """The compiled functions of the model text `mech` was built from, or None until its engine has been
        built on this machine."""
        filed = filed_functions(engine_key(model_text), "engine")
        return None if filed is None else cls(mech, filed.functions["closure"], filed.functions["r_matrix"])

    def assemble(self, q_ind: np.ndarray, guess: np.ndarray) -> np.ndarray:
        """Coordinates (n,) closing the loops at the independent values q_ind, from `guess` (n,) moved along R;
        AssemblyError when Newton does not get there (the numpy path then says why, naming the loop)."""
        n, k = self.mech.n, len(self.ind)
        R = self.r_matrix(guess)[0].reshape(n, k, order="F")
        q = guess + R @ (np.asarray(q_ind, dtype=float) - guess[self.ind])
        q[self.ind] = q_ind
        if not self.dep:
            return q
        best, start_sign = np.inf, None
        for _ in range(NEWTON_STEPS):
            phi, jac = self.closure(q)
            sign = np.sign(np.linalg.det(jac.reshape(len(phi), len(self.dep), order="F")))
            start_sign = sign if start_sign is None else start_sign
            residual = float(np.abs(phi).max())
            if residual <= self.tol or (residual >= best and residual <= ROUNDING_FLOOR * self.tol):
                if sign * start_sign < 0:  # another assembly branch: the numpy path continues and reports it
                    raise AssemblyError("Newton closed the loops on another assembly branch")
                return q
            best = min(best, residual)
            q[self.dep] -= np.linalg.solve(jac.reshape(len(phi), len(self.dep), order="F"), phi)
        raise AssemblyError(f"the loops do not close here (residual {residual:.3g})")
