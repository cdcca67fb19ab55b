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

from mbstudio.dynamics.spatial_tree import body_inertia
from mbstudio.kinematics import Mechanism
from mbstudio.model import load
from mbstudio.simulation.kc_rig import KCOptions, axle_roll, kc_analysis, vehicle_corner
from mbstudio.simulation.manoeuvres import G, ManoeuvreOptions, axles, manoeuvre

SAMPLE = Path(__file__).resolve().parents[1] / "samples" / "vehicle_handling.mbs"
CORNERS = {"front": "fl", "rear": "rl"}
BANDS = (0.15, 0.2, 0.25, 0.3, 0.4, 0.5, 0.6, 0.7, 0.77)  # g


def sprung(mech: Mechanism, roll_centres: list[float]) -> tuple[float, float, float]:
    """The sprung mass m_s (chassis and rack), its centre's height h' over the roll axis (through the roll centres
    over the front and rear axles) and the track of the wheel centres."""
    q = mech.assemble(None)
    points, st = mech.points(q), mech.motion(q, np.zeros_like(q))
    bodies = [body_inertia(mech, st, mech.tree.body_index(label)) for label in ("chassis", "rack")]
    mass = sum(float(np.asarray(b.m).ravel()[0]) for b in bodies)
    centre = sum(np.asarray(b.c, float).ravel() for b in bodies) / mass
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
    mass, arm, track = sprung(mech, [kc[a].design["roll_centre_height"][1] for a in CORNERS])
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
    against m_s h' / (K_f + K_r − m_s g h'), each axle's K = t² k_l k_r / (k_l + k_r) with k the K&C wheel rate at the
    wheel's travel in the run (from its damper's length, through the rig's sweep) in series with the tyre."""
    options = ManoeuvreOptions(kind="constant_radius", speeds=(5.0, 25.0), duration=30.0, radius=40.0, samples=601)
    result = manoeuvre(car, options)
    column = {name: values for name, _, values in result.runs[0].columns()}
    table = {name: values for name, _, values in result.columns}
    lost = result.figures.get("circle_lost_at_time", (math.inf, "s"))[0]
    held = (table["t"] >= 4.0) & (table["t"] < lost)
    ay, roll = table["lateral_acceleration"], table["roll"]

    dampers = {axle: kc[axle].travel.q[:, Mechanism(vehicle_corner(car, c)).coordinates.index(f"{c}_damper_s")]
               for axle, c in CORNERS.items()}  # fmt: skip

    def stiffness(axle: str, corner: str, k: int) -> tuple[float, float]:
        sweep, damper = kc[axle].travel, dampers[axle]
        travel = np.interp(column[f"{corner}_damper_s"][k], damper[::-1], sweep.x[::-1])
        rate = float(np.interp(travel, sweep.x, sweep.curves["wheel_rate"][1]))
        return 1 / (1 / rate + 1 / tyre), travel

    print("a_y band [g] | run dφ/da_y [deg/g] | K&C at the run's travels [deg/g] | travels fl fr rl rr [mm]")
    for low, high in zip(BANDS, BANDS[1:], strict=False):
        band = held & (ay >= low * G) & (ay <= high * G)
        measured = math.degrees(np.polyfit(ay[band], roll[band], 1)[0]) * G
        predicted, travels = [], []
        for k in np.flatnonzero(band):
            total, at = 0.0, []
            for axle, (left, right) in (("front", ("fl", "fr")), ("rear", ("rl", "rr"))):
                (kl, sl), (kr, sr) = stiffness(axle, left, k), stiffness(axle, right, k)
                total += track**2 * kl * kr / (kl + kr)
                at += [sl, sr]
            predicted.append(math.degrees(mass * arm / (total - mass * G * arm)) * G)
            travels.append(at)
        mean = np.mean(travels, axis=0) * 1e3
        print(f"  {low:.2f}-{high:.2f} | {measured:6.2f} | {np.mean(predicted):6.2f} | "
              + " ".join(f"{x:+6.1f}" for x in mean))  # fmt: skip


if __name__ == "__main__":
    main()
