"""The K&C rig's axle roll test as a test of its own (`mbstudio kc --test axle_roll`, the window's K&C dialog): the
corner's travel sweep on the rig, then the axle of that corner and its mirror rolled at constant axle load, the
body free to heave (kc_rig.axle_roll), with the figures a vehicle engineer quotes: the roll stiffness at design,
with and without the tyres, and the roll at which it steps up (a wheel reaching a stop).

    test = axle_roll_test(model, KCOptions(test="axle_roll", roll=math.radians(3), tyre_stiffness=250e3))
    test.roll.moment, test.roll.stiffness          # N m and N m/rad against test.roll.roll (rad)
    test.figures["roll_stiffness"]                 # ("N m/rad", at design)
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass

import numpy as np

from ..kinematics import Mechanism
from ..model import Model, ModelError
from ..progress import Cancel, Progress
from .kc_rig import AxleRoll, KCOptions, KCResult, axle_roll, kc_analysis
from .suspension import Sweep, suspension_measure

STEP = 1.1  # the stiffness this many times the design's: a stop engaged (the springs alone change it by < 1 %)


@dataclass
class AxleRollTest:
    """The axle roll of the corner `kc` and its mirror `track` apart (tyres of `tyre_stiffness` each, None rigid)."""

    kc: KCResult
    track: float
    tyre_stiffness: float | None
    roll: AxleRoll
    provenance: dict

    @property
    def model(self) -> str:
        return self.kc.model

    @property
    def measure(self) -> str:
        return self.kc.measure

    @property
    def figures(self) -> dict[str, tuple[str, float]]:
        """The roll stiffness at design (suspension, and through the tyres), its largest over the range, the
        smallest roll at which it steps up by STEP (a stop engaged; NaN if it never does) with the wheels' travels
        there, and the smallest roll within STEP of the largest. Rolled right side down: the axle is a corner and its
        mirror, so rolling the other way mirrors these."""
        r, middle = self.roll, len(self.roll.roll) // 2
        rolled = r.roll > 0
        first = _first(rolled & (r.stiffness > STEP * r.stiffness[middle]))
        full = _first(rolled & (r.stiffness * STEP > r.stiffness.max()))
        return {
            "track": ("m", self.track),
            "roll_stiffness": ("N m/rad", float(r.stiffness[middle])),
            "roll_stiffness_with_tyres": ("N m/rad", float(r.total_stiffness[middle])),
            "largest_roll_stiffness": ("N m/rad", float(r.stiffness.max())),
            "first_stop_roll": ("rad", _at(r.roll, first)),
            "first_stop_left_travel": ("m", _at(r.left_travel, first)),
            "first_stop_right_travel": ("m", _at(r.right_travel, first)),
            "largest_stiffness_roll": ("rad", _at(r.roll, full)),
        }

    def sweep(self) -> Sweep:
        """The test's curves against the suspension roll (rad), for the CSV and the page."""
        r = self.roll
        curves = {
            "roll_moment": ("N m", r.moment),
            "roll_stiffness": ("N m/rad", r.stiffness),
            "heave": ("m", r.heave),
            "left_travel": ("m", r.left_travel),
            "right_travel": ("m", r.right_travel),
        }
        if self.tyre_stiffness is not None:
            curves |= {"roll_with_tyres": ("rad", r.total_roll), "roll_stiffness_with_tyres": ("N m/rad",
                       r.total_stiffness)}  # fmt: skip
        return Sweep("roll", "rad", r.roll, curves, np.zeros((len(r.roll), 0)))


def axle_roll_test(
    model: Model, options: KCOptions, progress: Progress | None = None, cancel: Cancel | None = None
) -> AxleRollTest:
    """The corner's travel sweep on the rig (options.travel, options.travel_points; the load sweeps at their
    fewest), then its axle rolled ±options.roll over options.roll_points."""
    kc = kc_analysis(model, dataclasses.replace(options, load_points=3), progress, cancel)
    track = options.track if options.track is not None else design_track(model, kc.measure)
    tyre = np.inf if options.tyre_stiffness is None else options.tyre_stiffness
    try:
        rolled = axle_roll(kc, track, options.roll, options.roll_points, tyre)
    except ModelError:
        largest = _largest_roll(kc, track)
        low, high = kc.travel.x[[0, -1]] * 1e3
        reached = f"takes a wheel beyond the travel the rig's sweep reached ({low:+.1f} to {high:+.1f} mm)"
        raise ModelError("K&C option roll", reached, f"{math.degrees(options.roll):.4g} deg",
                         f"a roll up to {math.degrees(largest):.3g} deg, or a longer travel the corner reaches",
                         ) from None  # fmt: skip
    provenance = kc.provenance | {
        "method": "K&C axle roll: the corner's travel sweep (static equilibria on the rig) and its mirror rolled at "
        "constant axle load, the body free to heave; stiffness t² k_l k_r / (k_l + k_r) from the rig's wheel rates",
        "track": track,
    }
    return AxleRollTest(kc, track, options.tyre_stiffness, rolled, provenance)


def design_track(model: Model, measure: str | None) -> float:
    """Twice the wheel centre's distance from the vehicle's centre plane y = 0 at the design pose (m)."""
    mech = Mechanism(model)
    m = suspension_measure(model, measure)
    R, p = (np.asarray(x, float)[0] for x in mech.poses(np.asarray(mech.assemble(None), float))[m.wheel])
    centre = p + R @ np.asarray(mech.tree.geometry.point(model.body(m.wheel), m.centre), float)
    return 2 * abs(float(centre[1]))


def _largest_roll(kc: KCResult, track: float) -> float:
    """The largest roll (rad) whose wheels stay inside the sweep, by bisection to 1e-4 of its size."""
    low, high = 0.0, 4 * float(np.ptp(kc.travel.x)) / track
    while high - low > 1e-4 * high:
        middle = (low + high) / 2
        try:
            axle_roll(kc, track, middle, 3)
            low = middle
        except ModelError:
            high = middle
    return low


def _first(where: np.ndarray) -> int | None:
    """The first index where `where` holds (the rolls rise along the test), None if nowhere."""
    hits = np.flatnonzero(where)
    return int(hits[0]) if len(hits) else None


def _at(values: np.ndarray, k: int | None) -> float:
    return math.nan if k is None else float(values[k])
