"""MJCF in (io/mjcf_import.py), checked against MuJoCo itself: the file compiled by MuJoCo, our document built from
the compiled model, and MuJoCo's mass matrix (mj_fullM) and bias forces (qfrc_bias) against ours at random states;
a four-bar closed by a `connect` equality moves as MuJoCo moves it, MuJoCo's soft constraint converging on our
exact motion as its time step shrinks. The test models are ours (tests/mjcf/)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from mbstudio.dynamics.inverse_dynamics import inverse_dynamics
from mbstudio.dynamics.mass_matrix import mass_matrix
from mbstudio.io.mjcf_import import import_mjcf
from mbstudio.kinematics import Mechanism
from mbstudio.model import ModelError
from mbstudio.numerics import rodrigues

from .mujoco_matrices import mujoco_mass_matrix

mujoco = pytest.importorskip("mujoco")
HERE = Path(__file__).parent / "mjcf"
OBJ_JOINT = mujoco.mjtObj.mjOBJ_JOINT


def _mujoco_order(result, m, mech: Mechanism) -> list[int]:
    """Our coordinate index of each MuJoCo dof (hinge and slide joints: one each)."""
    names = [mujoco.mj_id2name(m, mujoco.mjtObj.mjOBJ_JOINT, j) for j in range(m.njnt)]
    return [mech.coordinates.index(c) for name in names for c in result.coordinates[name]]


def _without_forces(model):
    bare = model.copy()
    bare.forces = []
    return Mechanism(bare)


def test_a_tree_has_mujocos_mass_matrix_and_bias_forces_at_random_states():
    """tests/mjcf/arm.xml: degrees, euler and quat poses, refs, two joints in one body, a slide, inertias written
    three ways and inferred from geoms, a fixed body, a non-vertical gravity."""
    path = HERE / "arm.xml"
    result = import_mjcf(path)
    mech = Mechanism(result.model)
    m = mujoco.MjModel.from_xml_path(str(path))
    m.dof_damping[:] = 0  # the forces are compared on their own below
    m.jnt_stiffness[:] = 0
    d = mujoco.MjData(m)
    order = _mujoco_order(result, m, mech)
    bare = _without_forces(result.model)
    rng, worst = np.random.default_rng(21), {"M": 0.0, "bias": 0.0}
    for _ in range(10):
        q, v = rng.uniform(-1.5, 1.5, (2, mech.n))
        d.qpos[:], d.qvel[:] = q[order], v[order]
        mujoco.mj_forward(m, d)
        full = mujoco_mass_matrix(m, d)
        ours = mass_matrix(mech, q[None])[0][np.ix_(order, order)]
        bias = inverse_dynamics(bare, q[None], v[None], np.zeros((1, mech.n)))[0][order]
        worst["M"] = max(worst["M"], np.abs(ours - full).max())
        worst["bias"] = max(worst["bias"], np.abs(bias - d.qfrc_bias).max())
    assert worst["M"] <= 1e-10 and worst["bias"] <= 1e-10, worst
    assert np.abs(full).max() > 0.01 and np.abs(d.qfrc_bias).max() > 0.1  # numbers of a size that tests something


def test_the_import_keeps_names_limits_refs_forces_and_says_what_it_changed():
    result = import_mjcf(HERE / "arm.xml")
    model = result.model
    assert [b.name for b in model.bodies if "__" not in b.label][:2] == ["base", "upper arm"]
    assert result.coordinates["shoulder.pitch"] == ["shoulder_pitch"]  # not an identifier: made one, and mapped
    yaw = model.joint("yaw").coordinates[0]
    assert (yaw.min, yaw.max) == pytest.approx((-np.radians(170), np.radians(170)))
    assert yaw.initial == pytest.approx(np.radians(15))  # MuJoCo's ref: our coordinate is MuJoCo's qpos
    assert model.joint("extend").coordinates[0].initial == pytest.approx(0.05)
    # two joints in body 'upper arm': a massless body between them
    assert model.joint("shoulder_pitch").child == "upper_arm__1" and model.joint("shoulder_roll").child == "upper_arm"
    forces = {f.name: f for f in model.forces}
    assert forces["yaw_friction"].viscous == pytest.approx(0.3) and forces["wrist_spring"].stiffness == 2.0
    assert forces["wrist_spring"].rest == pytest.approx(np.radians(10))
    assert forces["yaw_motor"].coordinate == "yaw"
    notes = " ".join(result.notes)
    assert "ellipsoid is drawn as a sphere" in notes and "ctrl × 2" in notes and "contacts are left out" in notes
    assert "arm.xml" in model.description


def mujoco_state(result, m, mech: Mechanism, q: np.ndarray, qd: np.ndarray):
    """MuJoCo's qpos, qvel for our q, q̇, with T and b: qvel = T q̇ and its rate T q̈ + b. Hinges and slides as they
    are; a ball's quaternion of R(ρ) and its angular velocity in the body frame, Jᵀ(ρ) ρ̇; a free joint's position,
    its quaternion, its linear velocity in the world (ours too) and its angular velocity in the body frame."""
    qpos, T, b = np.zeros(m.nq), np.zeros((m.nv, mech.n)), np.zeros(m.nv)
    for j in range(m.njnt):
        cols = [mech.coordinates.index(c) for c in result.coordinates[mujoco.mj_id2name(m, OBJ_JOINT, j)]]
        a, v, kind = int(m.jnt_qposadr[j]), int(m.jnt_dofadr[j]), int(m.jnt_type[j])
        if kind == mujoco.mjtJoint.mjJNT_FREE:
            qpos[a : a + 3], T[v : v + 3, cols[:3]] = q[cols[:3]], np.eye(3)
            a, v, cols = a + 3, v + 3, cols[3:]
        if len(cols) == 1:
            qpos[a], T[v, cols[0]] = q[cols[0]], 1.0
            continue
        rho, rate = q[cols], qd[cols]
        w, x = rodrigues.quaternion(rho)
        qpos[a : a + 4], T[v : v + 3, cols] = [w, *x], rodrigues.jacobian(rho).T
        b[v : v + 3] = -rodrigues.jacobian_rate(-rho, rate)  # d/dt (J(ρ)ᵀ) ρ̇, J(ρ)ᵀ = J(−ρ)
    return qpos, T @ qd, T, b


def test_free_and_ball_joints_have_mujocos_mass_matrix_and_bias_forces_at_random_states():
    """tests/mjcf/floating.xml: a free body, ball joints (one beside a hinge in one body): M_ours = Tᵀ M T and
    ours at zero acceleration Tᵀ (M b + bias), with MuJoCo's velocities qvel = T q̇ (mujoco_state)."""
    path = HERE / "floating.xml"
    result = import_mjcf(path)
    model = result.model
    assert [model.joint(n).type for n in ("torso_free", "shoulder", "palm")] == ["free", "ball", "ball"]
    assert model.joint("torso_free").source_name == "torso free"
    mech = Mechanism(model)
    m = mujoco.MjModel.from_xml_path(str(path))
    d = mujoco.MjData(m)
    start = np.asarray(mech.tree.initial_coordinates(), float)
    before_fingers = m.jnt_qposadr[mujoco.mj_name2id(m, OBJ_JOINT, "f1")]  # the coupled fingers' pose is closed
    reference = mujoco_state(result, m, mech, start, start)[0][:before_fingers]
    assert np.abs(reference - m.qpos0[:before_fingers]).max() < 1e-15  # MuJoCo's reference pose is ours
    rng, worst = np.random.default_rng(8), {"M": 0.0, "bias": 0.0}
    for _ in range(10):
        q, qd = rng.uniform(-1.5, 1.5, (2, mech.n))
        d.qpos[:], d.qvel[:], T, b = mujoco_state(result, m, mech, q, qd)
        mujoco.mj_forward(m, d)
        full = mujoco_mass_matrix(m, d)
        worst["M"] = max(worst["M"], np.abs(mass_matrix(mech, q[None])[0] - T.T @ full @ T).max())
        bias = inverse_dynamics(mech, q[None], qd[None], np.zeros((1, mech.n)))[0]
        worst["bias"] = max(worst["bias"], np.abs(bias - T.T @ (full @ b + d.qfrc_bias)).max())
    assert worst["M"] <= 1e-10 and worst["bias"] <= 1e-10, worst
    assert np.abs(d.qfrc_bias).max() > 1 and np.abs(b).max() > 0.1  # numbers of a size that tests something


def test_joint_equalities_are_couplings_that_hold_where_mujocos_equalities_hold():
    """A cubic through the joints' refs, a line to a slide, a joint held at a value: our coupled pose, given to
    MuJoCo, violates none of its joint equalities (efc_pos, MuJoCo's own residual)."""
    result = import_mjcf(HERE / "floating.xml")
    couplings = {c.name: c for c in result.model.couplings}
    assert (couplings["held"].leader, couplings["held"].offset) == (None, 0.4)
    assert couplings["cam"].polynomial == pytest.approx([0.1236, -0.944, 0.42, -0.2], abs=1e-15)
    mech = Mechanism(result.model)
    assert mech.dof == mech.n - 3 and {"f2", "f3", "f4"}.isdisjoint(mech.independent)
    m = mujoco.MjModel.from_xml_path(str(HERE / "floating.xml"))
    d = mujoco.MjData(m)
    start = dict(zip(mech.coordinates, mech.tree.initial_coordinates(), strict=True))
    for f1 in (-0.6, 0.2, 0.9):
        q = mech.assemble({name: f1 if name == "f1" else start[name] for name in mech.independent})[0]
        d.qpos[:] = mujoco_state(result, m, mech, q, q)[0]
        mujoco.mj_forward(m, d)
        rows = d.efc_type == mujoco.mjtConstraint.mjCNSTR_EQUALITY
        assert rows.sum() == 3 and np.abs(d.efc_pos[rows]).max() < 1e-14


def test_joint_forces_act_as_mujocos_passive_forces():
    """Damping and stiffness: our force elements' generalized forces equal MuJoCo's qfrc_passive."""
    from mbstudio.dynamics.forces import AppliedForces

    path = HERE / "arm.xml"
    result = import_mjcf(path)
    mech = Mechanism(result.model)
    m = mujoco.MjModel.from_xml_path(str(path))
    d = mujoco.MjData(m)
    order = _mujoco_order(result, m, mech)
    q, v = np.random.default_rng(3).uniform(-1, 1, (2, mech.n))
    d.qpos[:], d.qvel[:] = q[order], v[order]
    mujoco.mj_forward(m, d)
    forces = AppliedForces(mech, result.model.forces)
    ours = forces.generalized(0.0, q[None], v[None])[0][order]
    assert np.abs(ours - d.qfrc_passive).max() <= 1e-12


def test_a_four_bar_closed_by_connect_moves_as_mujoco_moves_it():
    """1 s from rest under gravity. MuJoCo's equality is soft (a spring-damper of time constant solref, here twice
    the step) and RK4 integrates it: its crank-rocker angles meet ours within 1e-3 rad at a 50 µs step and four
    times closer at half that, a second-order approach to our exact (closed to 1e-15) motion."""
    if tuple(int(part) for part in mujoco.__version__.split(".")[:2]) < (3, 7):
        pytest.skip("MuJoCo before 3.7 steps this soft connect 11 times further from the exact motion (7e-3 rad)")
    from mbstudio.simulation.run import simulate

    path = HERE / "four_bar.xml"
    result = import_mjcf(path)
    mech = Mechanism(result.model)
    assert [j.name for j in mech.topology.cut] == ["loop"] and len(mech.independent) == 1
    run = simulate(result.model, 1.0, rtol=1e-10, atol=1e-12, samples=101)
    assert run.residual.max() < 1e-12 and np.ptp(run.q[:, 0]) > 1.0  # closed, and it swings
    m = mujoco.MjModel.from_xml_path(str(path))
    order = _mujoco_order(result, m, mech)
    errors = []
    for step in (m.opt.timestep * 2, m.opt.timestep):
        m.opt.timestep, m.eq_solref[0, 0] = step, 2 * step
        d, worst = mujoco.MjData(m), 0.0
        for t, q in zip(run.t, run.q, strict=True):
            while d.time < t - step / 2:
                mujoco.mj_step(m, d)
            worst = max(worst, np.abs(d.qpos - q[order]).max())
        errors.append(worst)
    assert errors[1] < 1e-3 and errors[0] / errors[1] > 3, errors


def test_files_that_are_not_mechanisms_are_refused_by_name(tmp_path):
    with pytest.raises(ModelError, match="does not exist"):
        import_mjcf(tmp_path / "missing.xml")
    bad = tmp_path / "bad.xml"
    bad.write_text("<mujoco><worldbody><body><joint type='hinge'/></body></worldbody>")
    with pytest.raises(ModelError, match="is not an MJCF model MuJoCo compiles"):
        import_mjcf(bad)
    tendon = tmp_path / "tendon.xml"
    tendon.write_text(
        "<mujoco><worldbody><body name='a'><joint name='j' type='hinge'/><geom size='0.1'/></body></worldbody>"
        "<tendon><fixed name='t'><joint joint='j' coef='1'/></fixed></tendon>"
        "<equality><tendon tendon1='t'/></equality></mujoco>"
    )
    with pytest.raises(ModelError, match="tendon"):
        import_mjcf(tendon)
    ball = tmp_path / "ball.xml"
    ball.write_text(
        "<mujoco><worldbody><body name='a'><joint name='j1' type='ball'/><geom size='0.1'/>"
        "<body name='b'><joint name='j2' type='hinge'/><geom size='0.1'/></body></body></worldbody>"
        "<equality><joint joint1='j2' joint2='j1'/></equality></mujoco>"
    )
    with pytest.raises(ModelError, match="only HINGE and SLIDE joint allowed in constraint"):  # MuJoCo's words
        import_mjcf(ball)


# ---------------------------------------------------------------------------------------------- export
def _compare_with_mujoco(model, path: Path, states: int = 5) -> dict[str, float]:
    """Our mass matrix and bias forces of `model` against MuJoCo's reading of the MJCF file at `path`, whose joints
    are named after our coordinates."""
    mech, bare = Mechanism(model), _without_forces(model)
    m = mujoco.MjModel.from_xml_path(str(path))
    order = [mech.coordinates.index(mujoco.mj_id2name(m, mujoco.mjtObj.mjOBJ_JOINT, j)) for j in range(m.njnt)]
    d, rng, worst = mujoco.MjData(m), np.random.default_rng(5), {"M": 0.0, "bias": 0.0}
    m.dof_damping[:], m.jnt_stiffness[:] = 0, 0
    for _ in range(states):
        q, v = rng.uniform(-1, 1, (2, mech.n))
        d.qpos[:], d.qvel[:] = q[order], v[order]
        mujoco.mj_forward(m, d)
        full = mujoco_mass_matrix(m, d)
        bias = inverse_dynamics(bare, q[None], v[None], np.zeros((1, mech.n)))[0][order]
        worst["M"] = max(worst["M"], np.abs(mass_matrix(mech, q[None])[0][np.ix_(order, order)] - full).max())
        worst["bias"] = max(worst["bias"], np.abs(bias - d.qfrc_bias).max())
    return worst


@pytest.mark.parametrize("name", ["puma560", "sla_suspension", "four_bar", "delta_3rr2rrr", "double_pendulum"])
def test_exported_samples_read_by_mujoco_have_our_dynamics(tmp_path, name):
    """Each sample written as MJCF and compiled by MuJoCo: the tree's mass matrix and bias forces equal ours (the
    SLA's and the Delta's loops as connect equalities); thin rods' zero moments raised to 1e-12 kg m^2 are said."""
    from mbstudio import samples
    from mbstudio.io.mjcf_export import mjcf_text

    model = samples.load(name)
    text, notes = mjcf_text(model)
    path = tmp_path / f"{name}.xml"
    path.write_text(text)
    worst = _compare_with_mujoco(model, path)
    assert worst["M"] <= 1e-10 and worst["bias"] <= 1e-10, worst
    m = mujoco.MjModel.from_xml_path(str(path))
    assert m.neq == {"sla_suspension": 3, "four_bar": 2, "delta_3rr2rrr": 10}.get(name, 0)
    if name == "double_pendulum":
        assert any("raised to at least 1e-12" in note for note in notes)


def test_export_then_import_gives_back_the_model_and_its_loops(tmp_path):
    """MJCF in, out and in again: the same dynamics at 1e-12, the same coordinate names, the loop still closed, and
    MuJoCo's reference pose our closed pose (refs), so the connect anchors hold in MuJoCo as written."""
    from mbstudio.io.mjcf_export import mjcf_text

    for source in ("arm.xml", "four_bar.xml"):
        first = import_mjcf(HERE / source)
        text, _ = mjcf_text(first.model)
        path = tmp_path / source
        path.write_text(text)
        second = import_mjcf(path)
        a, b = Mechanism(first.model), Mechanism(second.model)
        assert a.coordinates == b.coordinates
        assert [c.name for c in first.model.bodies] != [] and [x.name for x in second.model.bodies][:1] == [
            x.name for x in first.model.bodies
        ][:1]
        q = a.assemble(None)[0]
        assert np.abs(b.assemble(None)[0] - q).max() < 1e-9
        M1, M2 = mass_matrix(a, q[None])[0], mass_matrix(b, q[None])[0]
        assert np.abs(M1 - M2).max() <= 1e-12
        m = mujoco.MjModel.from_xml_path(str(path))
        d = mujoco.MjData(m)
        mujoco.mj_forward(m, d)
        assert np.abs(d.efc_pos[d.efc_type == mujoco.mjtConstraint.mjCNSTR_EQUALITY]).max(initial=0.0) < 1e-9


def test_free_ball_and_coupled_joints_export_as_mujoco_reads_the_file_they_came_from(tmp_path):
    """tests/mjcf/floating.xml in and out: MuJoCo's reading of our file and of the original, joint by joint name
    at the same random qpos and qvel, have the same mass matrix and bias forces, and the joint equalities (written
    about our closed reference pose) hold at the same poses."""
    from mbstudio.io.mjcf_export import mjcf_text

    original = HERE / "floating.xml"
    result = import_mjcf(original)
    path = tmp_path / "floating.xml"
    path.write_text(mjcf_text(result.model)[0])
    models = [mujoco.MjModel.from_xml_path(str(p)) for p in (original, path)]
    names = [mujoco.mj_id2name(models[0], OBJ_JOINT, j) for j in range(models[0].njnt)]
    joints = [[mujoco.mj_name2id(m, OBJ_JOINT, n) for n in names] for m in models]
    assert all(j >= 0 for j in joints[1]) and models[1].neq == 3
    data, rng = [mujoco.MjData(m) for m in models], np.random.default_rng(6)
    qpos, qvel = rng.uniform(-1, 1, models[0].nq), rng.uniform(-1, 1, models[0].nv)
    mech = Mechanism(result.model)
    q = mech.assemble({name: 0.7 if name == "f1" else 0.1 for name in mech.independent})[0]  # a coupled pose
    coupled = mujoco_state(result, models[0], mech, q, q)[0]
    matrices, forces, residuals = [], [], []
    for m, d, ids in zip(models, data, joints, strict=True):
        qposadr, dofadr = m.jnt_qposadr[ids], m.jnt_dofadr[ids]
        sizes = [(7, 6) if t == 0 else (4, 3) if t == 1 else (1, 1) for t in m.jnt_type[ids]]
        at = np.concatenate([np.arange(a, a + n) for a, (n, _) in zip(qposadr, sizes, strict=True)])
        dofs = np.concatenate([np.arange(a, a + n) for a, (_, n) in zip(dofadr, sizes, strict=True)])
        d.qpos[at], d.qvel[dofs] = qpos, qvel
        mujoco.mj_forward(m, d)
        full = mujoco_mass_matrix(m, d)
        matrices.append(full[np.ix_(dofs, dofs)])
        forces.append(d.qfrc_bias[dofs])
        d.qpos[at] = coupled
        mujoco.mj_forward(m, d)
        residuals.append(np.abs(d.efc_pos[d.efc_type == mujoco.mjtConstraint.mjCNSTR_EQUALITY]).max())
    assert np.abs(matrices[0] - matrices[1]).max() < 1e-12 and np.abs(forces[0] - forces[1]).max() < 1e-12
    assert max(residuals) < 1e-14


def test_loops_mjcf_cannot_close_are_refused_naming_the_joint():
    from mbstudio import samples
    from mbstudio.io.mjcf_export import mjcf_text

    with pytest.raises(ModelError, match="joint 'U8a'.*universal"):
        mjcf_text(samples.load("irsbot2"))


def test_the_command_line_imports_and_exports_mjcf(tmp_path, capsys):
    from mbstudio import samples
    from mbstudio.cli import main
    from mbstudio.model import load

    out = tmp_path / "four_bar.mbs"
    assert main(["import", str(HERE / "four_bar.xml"), "-o", str(out)]) == 0
    said = capsys.readouterr()
    assert "1 loop-closing joints" in said.out and "capsule is drawn as a cylinder" in said.err
    assert load(out).joint("loop").cut
    xml = tmp_path / "puma.xml"
    assert main(["export", str(samples.path("puma560")), "--mjcf", str(xml)]) == 0
    assert mujoco.MjModel.from_xml_path(str(xml)).nv == 6
    text = tmp_path / "notes.txt"
    text.write_text("not a model")
    assert main(["import", str(text), "-o", str(tmp_path / "x.mbs")]) == 2
    assert "is neither URDF nor MJCF" in capsys.readouterr().err and not (tmp_path / "x.mbs").exists()
    assert main(["export", str(samples.path("irsbot2")), "--mjcf", str(tmp_path / "irsbot.xml")]) == 2
    assert not (tmp_path / "irsbot.xml").exists()


def test_mujoco_writes_no_log_file_into_the_users_folder(tmp_path, monkeypatch):
    """MuJoCo appends its warnings to MUJOCO_LOG.TXT in the working folder; an import keeps them as notes."""
    monkeypatch.chdir(tmp_path)
    path = tmp_path / "nan.xml"
    path.write_text('<mujoco><worldbody><body pos="0 0 nan"><joint/><geom size="0.1"/></body></worldbody></mujoco>')
    with pytest.raises(ModelError, match="non-finite"):
        import_mjcf(path)
    assert list(tmp_path.iterdir()) == [path]
