"""Why the handling vehicle's roll gradient falls with lateral acceleration (docs/vehicle.md, "Roll at high lateral
acceleration"): the K&C rig's roll stiffness against roll angle, the quasi-static roll it predicts, and the
constant-radius manoeuvre's roll gradient over bands of a_y against that prediction at the wheel travels the run
reaches.

    python3 tools/roll_gradient_study.py [--no-run]

The K&C runs on the car's front left and rear left corners (kc_rig.vehicle_corner), 121 points over ±60 mm; each
axle is that corner and its mirror (kc_rig.axle_roll), the body free to heave, the tyres (250 kN/m) in series. The
roll moment balance is Gillespie's (1992, chapter 9): M_f(φ) + M_r(φ) = m_s h' (a_y + g φ), m_s the chassis and
rack, h' their centre of mass's height over the roll axis through the rig's roll centres at design. The manoeuvre
is `mbstudio manoeuvre samples/vehicle_handling.mbs --kind constant_radius --speed 5 --speed 25 --duration 30`.
"""

from __future__ import annotations

import argparse
import math
from pathlib import Path

import numpy as np

from mbstudio.kinematics import Mechanism
from mbstudio.model import load
from mbstudio.simulation.kc_rig import KCOptions, axle_roll, axle_roll_stiffness, kc_analysis, travel_at, vehicle_corner
from mbstudio.simulation.manoeuvres import G, ManoeuvreOptions, axles, manoeuvre, sprung_mass

SAMPLE = Path(__file__).resolve().parents[1] / "samples" / "vehicle_handling.mbs"
CORNERS = {"front": "fl", "rear": "rl"}  # the corner each axle's K&C runs on
AXLES = {"front": ("fl", "fr"), "rear": ("rl", "rr")}
BANDS = (0.15, 0.2, 0.25, 0.3, 0.4, 0.5, 0.6, 0.7, 0.77)  # g


def roll_arm(mech: Mechanism, roll_centres: list[float]) -> tuple[float, float, float]:
    """The sprung mass m_s (chassis and rack), its centre's height h' over the roll axis (through the roll centres
    over the front and rear axles) and the track of the wheel centres."""
    mass, centre = sprung_mass(mech)
    points = mech.points(mech.assemble(None))
    front, rear, _ = axles(mech)
    (fl, fr), rl = ((points[(t.body, t.point)][0] for t in front), points[(rear[0].body, rear[0].point)][0])
    axle_height = np.interp(centre[0], [rl[0], fl[0]], roll_centres[::-1])
    return mass, float(centre[2] - axle_height), float(fl[1] - fr[1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--no-run", action="store_true", help="the K&C figures only, not the manoeuvre")
    args = parser.parse_args()
    car = load(SAMPLE)
    mech = Mechanism(car)
    tyre = float(next(f for f in car.forces if f.name == "fl_tyre").stiffness)
    kc = {axle: kc_analysis(vehicle_corner(car, corner), KCOptions(axle=axle, travel=0.06, travel_points=121,
                                                                   load_points=3))
          for axle, corner in CORNERS.items()}  # fmt: skip
    mass, arm, track = roll_arm(mech, [kc[a].design["roll_centre_height"][1] for a in CORNERS])
    print(f"m_s = {mass:.1f} kg, h' = {arm:.4f} m, track {track:.4f} m, tyres {tyre:.0f} N/m")
    rolls = {a: axle_roll(kc[a], track, math.radians(3.0), 121, tyre) for a in CORNERS}
    print("suspension roll [deg] | roll stiffness front, rear [N m/deg] (suspension; with tyres) | travels fl, rl [mm]")
    for phi in (0.0, 0.5, 1.0, 1.5, 1.9, 2.1, 2.5, 2.9, 3.0):
        k = int(np.argmin(np.abs(rolls["front"].roll - math.radians(phi))))
        row = [(r.stiffness[k], r.total_stiffness[k], r.left_travel[k]) for r in rolls.values()]
        print(f"  {phi:4.1f} | " + " | ".join(f"{s * math.pi / 180:7.0f} {t * math.pi / 180:7.0f} {x * 1e3:+6.1f}"
                                             for s, t, x in row))  # fmt: skip
    # the quasi-static roll: a_y(φ) from the moment balance, both axles at the body's roll φ (tyres included)
    body = np.linspace(0.0, min(r.total_roll[-1] for r in rolls.values()), 400)
    moment = sum(np.interp(body, r.total_roll, r.moment) for r in rolls.values())
    ay = moment / (mass * arm) - G * body
    print("K&C quasi-static (no jacking): a_y [g], roll [deg], roll gradient [deg/g]")
    for level in (0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8):
        k = int(np.searchsorted(ay, level * G))
        if k < len(ay) - 1:
            slope = (body[k + 1] - body[k - 1]) / (ay[k + 1] - ay[k - 1])
            print(f"  {level:.1f} {math.degrees(body[k]):6.3f} {math.degrees(slope) * G:6.2f}")
    if not args.no_run:
        compare_with_the_run(car, kc, mass, arm, track, tyre)


def compare_with_the_run(car, kc: dict, mass: float, arm: float, track: float, tyre: float) -> None:
    """The constant-radius run's roll gradient over bands of a_y (least squares over the held readings in each)
    against m_s h' / (K_f + K_r − m_s g h'), each axle's K the rig's (axle_roll_stiffness) at the wheels' travels in
    the run (from their dampers' lengths, through the rig's sweep), the tyres in series."""
    options = ManoeuvreOptions(kind="constant_radius", speeds=(5.0, 25.0), duration=30.0, radius=40.0, samples=601)
    result = manoeuvre(car, options)
    column = {name: values for name, _, values in result.runs[0].columns()}
    table = {name: values for name, _, values in result.columns}
    lost = result.figures.get("circle_lost_at_time", (math.inf, "s"))[0]
    held = (table["t"] >= 4.0) & (table["t"] < lost)
    ay, roll = table["lateral_acceleration"], table["roll"]
    travel = run_travels(car, kc, column)
    stiffness = sum(axle_roll_stiffness(kc[axle], track, travel[left], travel[right], tyre)
                    for axle, (left, right) in AXLES.items())  # fmt: skip
    predicted = np.degrees(mass * arm / (stiffness - mass * G * arm)) * G
    print("a_y band [g] | run dφ/da_y [deg/g] | K&C at the run's travels [deg/g] | travels fl fr rl rr [mm]")
    for low, high in zip(BANDS, BANDS[1:], strict=False):
        band = held & (ay >= low * G) & (ay <= high * G)
        measured = math.degrees(np.polyfit(ay[band], roll[band], 1)[0]) * G
        travels = " ".join(f"{np.mean(travel[w][band]) * 1e3:+6.1f}" for w in ("fl", "fr", "rl", "rr"))
        print(f"  {low:.2f}-{high:.2f} | {measured:6.2f} | {np.mean(predicted[band]):6.2f} | {travels}")


def run_travels(car, kc: dict, column: dict) -> dict[str, np.ndarray]:
    """Each wheel's travel along a run (m, bump positive): its damper's length read on its axle's K&C sweep."""
    return {corner: travel_at(kc[axle], vehicle_corner(car, CORNERS[axle]), f"{CORNERS[axle]}_damper_s",
                              column[f"{corner}_damper_s"])
            for axle, corners in AXLES.items() for corner in corners}  # fmt: skip


if __name__ == "__main__":
    main()
