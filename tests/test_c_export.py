"""C export (`mbstudio eom FILE --c DIR`, io/c_code.py): the generated source compiles with the system compiler
and a small driver's numbers equal our float64 ones to 1e-12; two models link into one program (every symbol
prefixed, headers guarded), and matrices come by columns or, asked, by rows."""

from __future__ import annotations

import shutil
import subprocess

import numpy as np
import pytest

from mbstudio import samples
from mbstudio.cli import main
from mbstudio.dynamics.closed_loop import closed_loop_inverse_dynamics
from mbstudio.dynamics.engine import engine
from mbstudio.dynamics.inverse_dynamics import inverse_dynamics
from mbstudio.dynamics.mass_matrix import mass_matrix
from mbstudio.identification.pipeline import base_parameters
from mbstudio.io.c_code import c_prefix, c_sources
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
    /* CasADi's convention: arg and res hold the sizes _work gives, past the inputs scratch for nested calls */
    casadi_int sz_arg, sz_res, sz_iw, sz_w;
    if (%(prefix)saccelerations_work(&sz_arg, &sz_res, &sz_iw, &sz_w) || sz_arg > 64 || sz_res > 64) return 2;
    const double* a1[64] = {&t, in, in + n, tau}; double* r1[64] = {qdd};
    if (%(prefix)saccelerations(a1, r1, iw, w, 0)) return 1;
    const double* a2[64] = {in}; double* r2[64] = {M};
    if (%(prefix)smass_matrix(a2, r2, iw, w, 0)) return 1;
    for (int i = 0; i < k; ++i) printf("%%.17g\n", qdd[i]);
    for (int i = 0; i < n * n; ++i) printf("%%.17g\n", M[i]);
    return 0;
}
"""


@pytest.mark.parametrize("name", ["four_bar", pytest.param("sla_suspension", marks=pytest.mark.slow), "puma560"])
def test_the_generated_c_compiles_and_gives_our_numbers(tmp_path, name, capsys):
    assert main(["eom", str(samples.path(name)), "--c", str(tmp_path)]) == 0
    header = (tmp_path / f"{name}.h").read_text()
    prefix = c_prefix(samples.load(name))
    assert "model sha256" in header and f"{prefix}accelerations(t[1], q[" in header  # provenance and signatures
    assert "matrices by COLUMNS" in header
    eng = engine(samples.load(name))
    n, k = eng.n, len(eng.independent)
    (tmp_path / "driver.c").write_text(DRIVER % {"stem": name, "n": n, "k": k, "prefix": prefix})
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
    if (%(prefix)sbase_regressor(args, res, iw, w, 0)) return 1;
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
    values = {"stem": name, "n": mech.n, "size": k * run.rank, "prefix": c_prefix(model)}
    (tmp_path / "driver.c").write_text(BASE_DRIVER % values)
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
    assert f"{c_prefix(model)}base_regressor(q[" in files[f"{name}.h"] and "phi_b[0] = " in files[f"{name}.h"]


TWO_MODELS = r"""
#include <stdio.h>
#include "four_bar.h"
#include "four_bar.h" /* twice: the include guard keeps the second out */
#include "pendulum.h"
/* the four-bar's mass matrix and the pendulum's regressor (2 x 20) at the states on stdin, printed as stored */
int main(void) {
    double q4[3], x2[6], M4[9], K2[40];
    casadi_int iw[4096]; static double w[1 << 20];
    for (int i = 0; i < 3; ++i) if (scanf("%lf", q4 + i) != 1) return 2;
    for (int i = 0; i < 6; ++i) if (scanf("%lf", x2 + i) != 1) return 2;
    const double* a4[1] = {q4}; double* r4[1] = {M4};
    const double* a2[3] = {x2, x2 + 2, x2 + 4}; double* r2[1] = {K2};
    if (fourbar_mass_matrix(a4, r4, iw, w, 0) || double_pendulum_regressor(a2, r2, iw, w, 0)) return 1;
    for (int i = 0; i < 9; ++i) printf("%.17g\n", M4[i]);
    for (int i = 0; i < 40; ++i) printf("%.17g\n", K2[i]);
    return 0;
}
"""


def test_two_models_link_into_one_program_and_each_gives_its_own_numbers(tmp_path, capsys):
    """The four-bar's symbols under a given prefix, the pendulum's under its name's, its matrices by rows; the
    folder for the pendulum's files does not exist yet (--c makes it)."""
    four_bar, pendulum = tmp_path / "a", tmp_path / "new" / "b"
    assert main(["eom", str(samples.path("four_bar")), "--c", str(four_bar), "--prefix", "fourbar_"]) == 0
    assert main(["eom", str(samples.path("double_pendulum")), "--c", str(pendulum), "--row-major"]) == 0
    (pendulum / "double_pendulum.h").rename(pendulum / "pendulum.h")
    (pendulum / "double_pendulum.c").write_text(
        (pendulum / "double_pendulum.c").read_text().replace('"double_pendulum.h"', '"pendulum.h"')
    )
    header = (pendulum / "pendulum.h").read_text()
    assert "matrices by ROWS" in header and "#ifndef DOUBLE_PENDULUM_DOUBLE_PENDULUM_H" in header
    (tmp_path / "both.c").write_text(TWO_MODELS)
    program = tmp_path / "both"
    sources = [tmp_path / "both.c", four_bar / "four_bar.c", pendulum / "double_pendulum.c"]
    build = [COMPILER, "-O1", "-Wall", "-I", str(four_bar), "-I", str(pendulum), "-o", str(program)]
    subprocess.run([*build, *map(str, sources), "-lm"], check=True, capture_output=True, timeout=600)
    bar, swing = Mechanism(samples.load("four_bar")), Mechanism(samples.load("double_pendulum"))
    q4, (q2, qd2, qdd2) = bar.assemble(None)[0], np.array([[0.4, -1.1], [0.7, 0.2], [-0.3, 1.5]])
    text = " ".join(repr(float(x)) for x in (*q4, *q2, *qd2, *qdd2))
    run = subprocess.run([str(program)], input=text, capture_output=True, text=True, check=True)
    values = np.array(run.stdout.split(), dtype=float)
    M4, K2 = values[:9].reshape(3, 3, order="F"), values[9:].reshape(2, 20)  # by columns; by rows
    assert np.abs(M4 - mass_matrix(bar, q4[None])[0]).max() <= 1e-12
    phi = np.concatenate([np.asarray(swing.tree.geometry.inertia(b), float) for b in swing.model.bodies])
    tau = inverse_dynamics(swing, q2[None], qd2[None], qdd2[None])[0]
    assert np.abs(K2 @ phi - tau).max() <= 1e-12 * max(1.0, np.abs(tau).max())


def test_a_prefix_that_is_no_identifier_and_a_folder_that_is_a_file_are_refused(tmp_path, capsys):
    from mbstudio.model import ModelError

    with pytest.raises(ModelError, match="prefix"):
        c_sources(samples.load("double_pendulum"), "x", prefix="1-bad")
    (tmp_path / "file").write_text("keep")
    assert main(["eom", str(samples.path("double_pendulum")), "--c", str(tmp_path / "file")]) == 2
    assert "names a file, not a folder" in capsys.readouterr().err
    assert (tmp_path / "file").read_text() == "keep"


WARNINGS = ["-Wall", "-Wextra", "-pedantic", "-std=c99", "-Werror"]


@pytest.mark.parametrize(("name", "row_major"), [("four_bar", False), ("puma560", True)])
def test_the_generated_c_compiles_without_a_warning_under_wall_wextra_pedantic(tmp_path, name, row_major):
    """CasADi's calling convention hands every function (arg, res, iw, w, mem): those a function leaves unused are
    marked `(void)name;` (55 -Wunused-parameter warnings in the four-bar's file before, 53 in the PUMA's); a driver
    including the header compiles as cleanly, and the marked source still gives the engine's numbers (the tests
    above)."""
    model = samples.load(name)
    files = c_sources(model, name, row_major=row_major)
    for file, text in files.items():
        (tmp_path / file).write_text(text)
    (tmp_path / "main.c").write_text(f'#include "{name}.h"\nint main(void) {{ return 0; }}\n')
    for source in (f"{name}.c", "main.c"):
        build = [COMPILER, *WARNINGS, "-c", source, "-o", f"{source}.o"]
        done = subprocess.run(build, cwd=tmp_path, capture_output=True, text=True, timeout=600)
        assert done.returncode == 0 and "warning" not in done.stderr, done.stderr[:3000]
    assert "(void)iw; (void)w; (void)mem;" in files[f"{name}.c"]


def test_only_the_unused_parameters_are_marked():
    from mbstudio.io.c_code import mark_unused_parameters

    source = (
        "static int f(const double** arg, double** res, int* iw, double* w, int mem) {\n"
        "  res[0][0] = arg[0][0] + w[0];\n  return 0;\n}\n"
        "int g(void) {\n  return 1;\n}\n"
        "double h(double x) { return x; }\n"
    )
    marked = mark_unused_parameters(source).split("\n")
    assert marked[1] == "  (void)iw; (void)mem;" and marked[2] == "  res[0][0] = arg[0][0] + w[0];"
    assert marked[5:] == ["int g(void) {", "  return 1;", "}", "double h(double x) { return x; }", ""]
