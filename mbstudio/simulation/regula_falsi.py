"""The Illinois variant of regula falsi (Dowell & Jarratt 1971): where a function of a run's time crosses zero,
each trial a state integrated from a known one, so that the time found, and the state there, are the state's own
(contact_watch.py locates a contact pair's touch-down with it)."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np


def illinois(
    trial: Callable[[float], tuple[float, np.ndarray, int]],
    before: tuple[float, float],
    fall: tuple[float, float, np.ndarray],
    width: float,
) -> tuple[float, np.ndarray, int]:
    """Where the value crosses zero between `before` (time, value ≥ 0) and `fall` (time, value < 0, the state
    there), to within `width` of time: the first point known below zero (its time and state), and the evaluations
    the trials made. `trial(c)` integrates to time c: the value there, the state, the evaluations. The fall's own
    point is never taken as the answer: a trial below zero is asked for, so that the state returned is one
    integrated from the state before."""
    (a, fa), (b, fb, yb) = before, fall
    side, calls, tried_below = 0, 0, False
    while b - a > width or not tried_below:
        c = b - fb * (b - a) / (fb - fa)
        if not a < c < b:
            c = (a + b) / 2
        fc, yc, more = trial(c)
        calls += more
        if fc < 0:
            b, fb, yb, tried_below = c, fc, yc, True
            fa, side = (fa / 2 if side == -1 else fa), -1
        else:
            a, fa = c, fc
            fb, side = (fb / 2 if side == 1 else fb), 1
    return b, yb, calls
