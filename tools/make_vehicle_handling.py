"""Writes samples/vehicle_handling.mbs: the vehicle sample (samples/vehicle.mbs) with wheels that spin, Magic
Formula tyres, drive and brake torques and a steering input, on a flat road that stands still.

    python3 tools/make_vehicle_handling.py [OUT.mbs]

From samples/vehicle.mbs (tools/make_vehicle.py) it changes only what handling needs:

- each wheel turns on its hub (the SLA's wheel bearing, a revolute joint, `<corner>_spin`), balanced;
- each tyre is a Magic Formula tyre on the wheel (samples/passenger_car_205_55R16.tir, ours, on both axles; a left
  tyre, mirrored on the right) with
  the vertical spring, damping and free radius of the vertical tyre it replaces, so the car stands as before;
- a front-wheel drive: the drive torque `drive_torque` split equally to the front wheels (an open differential's
  split at equal wheel speeds), and brake torques `brake_torque` split `brake_front` to the front axle and the rest
  to the rear, half per wheel, written against forward rolling (a brake held at standstill would drive backwards);
- the steering servo follows `rack_input` (m of rack travel; `rack_ratio` m per rad of handwheel angle converts a
  handwheel input), 0 in the file: the manoeuvres (mbstudio/analysis/manoeuvres.py) set it;
- the road: flat at z = 0 and still (the car drives over it; start it with a forward velocity).

Every number added here is ours (plausible for a 1.5 t front-wheel-drive car), not from a paper.
"""

from __future__ import annotations

import copy
import dataclasses
import sys
from pathlib import Path

import numpy as np

from mbstudio.kinematics import Mechanism
from mbstudio.model import Coordinate, Parameter, load, save
from mbstudio.model.document import Actuator, MagicFormulaTyre, Tyre

SAMPLES = Path(__file__).resolve().parents[1] / "samples"
OUT = SAMPLES / "vehicle_handling.mbs"
TIR = "passenger_car_205_55R16.tir"
CORNERS = ("fl", "fr", "rl", "rr")
INPUTS = [  # name, value, unit, description
    ("drive_torque", 0.0, "N m", "drive torque at the front axle, split equally to its wheels"),
    ("brake_torque", 0.0, "N m", "total brake torque, against forward rolling"),
    ("brake_front", 0.7, None, "the front axle's share of the brake torque"),
    ("rack_input", 0.0, "m", "rack travel the steering servo follows (positive: to the car's left, steering right)"),
    ("rack_ratio", 0.02, "m", "rack travel per radian of handwheel angle (about 16:1 overall with these arms)"),
]
LOW_SPEED = 0.5  # m/s, the slips' regularisation at standstill


def spin_axis(model, corner: str) -> list[float]:
    """The wheel bearing's axis in the wheel's own axes (fixed in the wheel as it spins), signed to point to the
    car's left at the design pose."""
    mech = Mechanism(model)
    R = np.asarray(mech.tree.motion(mech.assemble(None)).R[mech.tree.body_index(f"{corner}5")], float)[0]
    wheel = model.body(f"{corner}5")
    axis = np.asarray(wheel.frames[model.joint(f"{corner}_wheel_bearing").child_frame].z, float)
    return [float(x) for x in axis * np.sign((R @ axis)[1])]


def balance(wheel, axis: list[float]) -> None:
    """The wheel balanced on its bearing: its centre of mass on the axis at its frame's origin (the wheel centre)
    and its inertia axisymmetric about the axis, keeping its mass, spin inertia and mean transverse inertia. The
    SLA sample's wheel is 4 mm out of balance, which at 20 m/s shakes the steering at the wheel's 9.5 Hz."""
    k = int(np.argmax(np.abs(axis)))
    names = [f"I{a}{a}" for a in "xyz"]
    spin = float(wheel.inertia[names[k]])
    transverse = float(np.mean([float(wheel.inertia[n]) for j, n in enumerate(names) if j != k]))
    wheel.inertia |= {"mx": 0.0, "my": 0.0, "mz": 0.0, "Ixy": 0.0, "Ixz": 0.0, "Iyz": 0.0}
    wheel.inertia |= {n: spin if j == k else transverse for j, n in enumerate(names)}


def handling(vehicle):
    """The handling vehicle from the vehicle sample's document."""
    model = copy.deepcopy(vehicle)
    model.name = "vehicle_handling"
    for corner in CORNERS:
        bearing = model.joint(f"{corner}_wheel_bearing")
        bearing.type, bearing.coordinates = "revolute", [Coordinate(f"{corner}_spin", 0.0)]
        balance(model.body(bearing.child), spin_axis(vehicle, corner))
        if corner[1] == "r":  # turned over on the right, so that every wheel spins positively rolling forward
            for body, name in ((bearing.parent, bearing.parent_frame), (bearing.child, bearing.child_frame)):
                frame = model.body(body).frames[name]
                frame.z = [-x for x in frame.z]
    axes = {corner: spin_axis(vehicle, corner) for corner in CORNERS}
    forces = []
    for f in model.forces:
        if isinstance(f, Tyre):
            corner = f.name.split("_")[0]
            side = "left" if corner[1] == "l" else "right"
            forces.append(MagicFormulaTyre(f.name, f"{corner}5", "K", str(SAMPLES / TIR), side, axes[corner],
                                           f.stiffness, f.damping, f.radius, f.engagement, LOW_SPEED))  # fmt: skip
        elif f.name == "steering_servo":
            forces.append(dataclasses.replace(f, rest="rack_input"))
        else:
            forces.append(f)
    shares = {"fl": "drive_torque/2 - brake_torque*brake_front/2", "fr": "drive_torque/2 - brake_torque*brake_front/2",
              "rl": "-brake_torque*(1 - brake_front)/2", "rr": "-brake_torque*(1 - brake_front)/2"}  # fmt: skip
    forces += [Actuator(f"{corner}_wheel_torque", f"{corner}_spin", shares[corner]) for corner in CORNERS]
    model.forces = forces
    model.parameters += [Parameter(n, v, u, d) for n, v, u, d in INPUTS]
    model.independent_coordinates = [*vehicle.independent_coordinates, *(f"{c}_spin" for c in CORNERS)]
    model.road = None
    model.description = DESCRIPTION + " " + vehicle.description
    return model


DESCRIPTION = (
    "A vehicle for handling (written by tools/make_vehicle_handling.py from samples/vehicle.mbs; the additions are "
    "ours): the wheels spin on their hubs (<corner>_spin), each tyre is a Magic Formula tyre on its wheel "
    f"({TIR}, a tyre file we wrote, on both axles) with the vertical spring, damping and free radius of the vehicle "
    "sample's tyre; front-wheel drive (drive_torque split equally to the front wheels), brakes (brake_torque, "
    "brake_front to the front axle), the steering servo following rack_input (m; rack_ratio m per rad of handwheel); "
    "a flat road at z = 0 that stands still. The vehicle sample it is built from:"
)


def main(out: Path = OUT) -> None:
    model = handling(load(SAMPLES / "vehicle.mbs"))
    save(model, out)
    print(f"wrote {out}: {sum(len(j.coordinates) for j in model.joints)} joint coordinates, {len(model.forces)} forces")


if __name__ == "__main__":
    main(Path(sys.argv[1]) if len(sys.argv) > 1 else OUT)
