"""The numpy module export (`mbstudio eom FILE --numpy OUT.py`, io/numpy_code.py): the engine's graphs translated
to plain numpy, imported back and compared with our float64 algorithms, one state and a batch at once."""

from __future__ import annotations

import importlib.util

import numpy as np
import pytest

from mbstudio import samples
from mbstudio.cli import main
from mbstudio.dynamics.closed_loop import closed_loop_inverse_dynamics
from mbstudio.dynamics.engine import engine
from mbstudio.dynamics.mass_matrix import mass_matrix
from mbstudio.identification.pipeline import base_parameters
from mbstudio.kinematics import Mechanism


def _module(path):
    spec = importlib.util.spec_from_file_location("exported", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("name", ["four_bar", "puma560"])
def test_the_numpy_module_gives_our_numbers(tmp_path, name, capsys):
    out = tmp_path / f"{name}_eom.py"
    assert main(["eom", str(samples.path(name)), "--numpy", str(out)]) == 0
    assert "numpy:" in capsys.readouterr().out
    text = out.read_text()
    assert "model sha256" in text and "phi_b[0] = " in text and "import numpy as np" in text
    exported = _module(out)
    model = samples.load(name)
    mech, eng = Mechanism(model), engine(model)
    k = len(mech.independent)
    q = mech.assemble(None)
    qd_ind, qdd_ind = np.linspace(0.5, -0.3, k)[None], np.linspace(-1.0, 0.7, k)[None]
    qd = mech.velocities(q, qd_ind)
    qdd = mech.accelerations(q, qd, qdd_ind)
    expected = eng.accelerations(0.2, q[0], qd_ind[0])
    got = exported.accelerations(0.2, q[0], qd_ind[0], np.zeros(mech.n))
    assert np.abs(got - expected).max() <= 1e-12 * max(1.0, np.abs(expected).max())
    assert np.abs(exported.mass_matrix(q[0]) - mass_matrix(mech, q)[0]).max() <= 1e-12
    run = base_parameters(model, "dp").dp
    phi = np.concatenate([np.asarray(mech.tree.geometry.inertia(b), float) for b in model.bodies])
    tau = closed_loop_inverse_dynamics(mech, q, qd, qdd_ind)[0]  # the independent route: RNEA, projected
    wb = exported.base_regressor(q[0], qd[0], qdd[0])
    assert wb.shape == (k, run.rank)
    assert np.abs(wb @ (run.base_map() @ phi) - tau).max() <= 1e-10 * max(1.0, np.abs(tau).max())
    batch = np.stack([q[0], q[0] + 0.01, q[0] - 0.02])  # three states at once equal them one by one
    together = exported.mass_matrix(batch)
    assert together.shape == (3, mech.n, mech.n)
    assert all(np.array_equal(together[i], exported.mass_matrix(batch[i])) for i in range(3))
