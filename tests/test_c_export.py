"""C export (`mbstudio eom FILE --c DIR`, io/c_code.py): the generated source compiles with the system compiler
and a small driver's numbers equal our float64 ones to 1e-12."""

from __future__ import annotations

import shutil
import subprocess

import numpy as np
import pytest

from mbstudio import samples
from mbstudio.cli import main
from mbstudio.dynamics.closed_loop import closed_loop_inverse_dynamics
from mbstudio.dynamics.engine import engine
from mbstudio.dynamics.mass_matrix import mass_matrix
from mbstudio.identification.pipeline import base_parameters
from mbstudio.io.c_code import c_sources
from mbstudio.kinematics import Mechanism

COMPILER = shutil.which("cc") or shutil.which("gcc")
pytestmark = pytest.mark.skipif(COMPILER is None, reason="no C compiler (cc or gcc) on this machine")

DRIVER = r"""
#include <stdio.h>
#include <stdlib.h>
#include "%(stem)s.h"
/* argv: t, then n values of q, k of qd_ind; prints qdd_ind, then the tree's mass matrix by columns */
int main(int argc, char** argv) {
    double in[64], qdd[64], M[4096], tau[64] = {0}, t = atof(argv[1]);
    int n = %(n)d, k = %(k)d;
    for (int i = 0; i < n + k; ++i) in[i] = atof(argv[2 + i]);
    casadi_int iw[4096]; static double w[1 << 20];
    const double* a1[4] = {&t, in, in + n, tau}; double* r1[1] = {qdd};
    if (accelerations(a1, r1, iw, w, 0)) return 1;
    const double* a2[1] = {in}; double* r2[1] = {M};
    if (mass_matrix(a2, r2, iw, w, 0)) return 1;
    for (int i = 0; i < k; ++i) printf("%%.17g\n", qdd[i]);
    for (int i = 0; i < n * n; ++i) printf("%%.17g\n", M[i]);
    return 0;
}
"""


@pytest.mark.parametrize("name", ["four_bar", pytest.param("sla_suspension", marks=pytest.mark.slow), "puma560"])
def test_the_generated_c_compiles_and_gives_our_numbers(tmp_path, name, capsys):
    assert main(["eom", str(samples.path(name)), "--c", str(tmp_path)]) == 0
    header = (tmp_path / f"{name}.h").read_text()
    assert "model sha256" in header and "accelerations(t[1], q[" in header  # provenance and signatures
    eng = engine(samples.load(name))
    n, k = eng.n, len(eng.independent)
    (tmp_path / "driver.c").write_text(DRIVER % {"stem": name, "n": n, "k": k})
    program = tmp_path / "driver"
    build = [COMPILER, "-O1", "-o", str(program), str(tmp_path / "driver.c"), str(tmp_path / f"{name}.c"), "-lm"]
    subprocess.run(build, check=True, capture_output=True, timeout=600)
    mech = Mechanism(samples.load(name))
    q = mech.assemble(None)[0]
    v = np.linspace(0.3, -0.4, k)
    arguments = [repr(float(x)) for x in (0.2, *q, *v)]
    run = subprocess.run([str(program), *arguments], capture_output=True, text=True)
    values = np.array(run.stdout.split(), dtype=float)
    qdd, M = values[:k], values[k:].reshape(n, n, order="F")
    expected = eng.accelerations(0.2, q, v)
    assert np.abs(qdd - expected).max() <= 1e-12 * max(1.0, np.abs(expected).max())
    assert np.abs(M - mass_matrix(mech, q[None])[0]).max() <= 1e-12


BASE_DRIVER = r"""
#include <stdio.h>
#include <stdlib.h>
#include "%(stem)s.h"
/* argv: n values each of q, qd, qdd; prints the base regressor Wb (n_ind x b) by columns */
int main(int argc, char** argv) {
    double in[192], Wb[65536];
    int n = %(n)d, size = %(size)d;
    for (int i = 0; i < 3 * n; ++i) in[i] = atof(argv[1 + i]);
    casadi_int iw[4096]; static double w[1 << 20];
    const double* args[3] = {in, in + n, in + 2 * n}; double* res[1] = {Wb};
    if (base_regressor(args, res, iw, w, 0)) return 1;
    for (int i = 0; i < size; ++i) printf("%%.17g\n", Wb[i]);
    return 0;
}
"""


@pytest.mark.parametrize("name", ["four_bar", "puma560"])
def test_the_base_regressor_in_c_times_the_base_parameters_gives_the_inverse_dynamics(tmp_path, name):
    model = samples.load(name)
    files = c_sources(model, name)
    for file, text in files.items():
        (tmp_path / file).write_text(text)
    run = base_parameters(model, "dp").dp
    mech = Mechanism(model)
    k = len(mech.independent)
    (tmp_path / "driver.c").write_text(BASE_DRIVER % {"stem": name, "n": mech.n, "size": k * run.rank})
    program = tmp_path / "driver"
    build = [COMPILER, "-O1", "-o", str(program), str(tmp_path / "driver.c"), str(tmp_path / f"{name}.c"), "-lm"]
    subprocess.run(build, check=True, capture_output=True, timeout=600)
    q = mech.assemble(None)  # a consistent state: the document's pose, velocities and accelerations through R
    qd_ind, qdd_ind = np.linspace(0.5, -0.3, k)[None], np.linspace(-1.0, 0.7, k)[None]
    qd = mech.velocities(q, qd_ind)
    qdd = mech.accelerations(q, qd, qdd_ind)
    arguments = [repr(float(x)) for x in (*q[0], *qd[0], *qdd[0])]
    out = subprocess.run([str(program), *arguments], capture_output=True, text=True, check=True).stdout
    wb = np.array(out.split(), dtype=float).reshape(k, run.rank, order="F")
    phi = np.concatenate([np.asarray(mech.tree.geometry.inertia(b), float) for b in model.bodies])
    tau = closed_loop_inverse_dynamics(mech, q, qd, qdd_ind)[0]  # the independent route: RNEA, projected
    assert np.abs(wb @ (run.base_map() @ phi) - tau).max() <= 1e-10 * max(1.0, np.abs(tau).max())
    assert "base_regressor(q[" in files[f"{name}.h"] and "phi_b[0] = " in files[f"{name}.h"]
