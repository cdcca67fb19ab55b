"""Frequency responses of a linear model: H(jω) = C (jωI − A)⁻¹ B + D on a logarithmic grid spanning its modes,
and the Bode form (magnitude in dB, phase in degrees unwrapped along the frequencies).

    w = frequency_grid(lin.eigenvalues)              # rad/s
    H = frequency_response(lin.A, lin.B, lin.C, lin.D, w)   # (F, outputs, inputs) complex
    magnitude_db, phase_deg = bode(H)
"""

from __future__ import annotations

import numpy as np

POINTS = 400
DECADE_MARGIN = 1.0  # decades below the slowest and above the fastest mode


def frequency_grid(eigenvalues: np.ndarray, count: int = POINTS) -> np.ndarray:
    """ω (rad/s), log-spaced from a decade below the slowest non-zero |λ| to a decade above the fastest
    (0.1 to 100 rad/s without any)."""
    sizes = np.abs(np.asarray(eigenvalues))
    sizes = sizes[sizes > 1e-9 * max(sizes.max(initial=0.0), 1.0)]
    low, high = (sizes.min(), sizes.max()) if sizes.size else (1.0, 10.0)
    return np.logspace(np.log10(low) - DECADE_MARGIN, np.log10(high) + DECADE_MARGIN, count)


def frequency_response(A: np.ndarray, B: np.ndarray, C: np.ndarray, D: np.ndarray, w: np.ndarray) -> np.ndarray:
    """H (F, p, m) at the frequencies w (F,) rad/s: one solve of (jωI − A) X = B per frequency."""
    shifted = 1j * np.asarray(w, float)[:, None, None] * np.eye(len(A)) - A[None, :, :]
    return C[None] @ np.linalg.solve(shifted, np.broadcast_to(B, (len(w), *B.shape)).astype(complex)) + D[None]


def bode(H: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Magnitude 20 log10 |H| (dB; −inf where H = 0) and phase (degrees, unwrapped along the frequencies)."""
    with np.errstate(divide="ignore"):
        magnitude = 20 * np.log10(np.abs(H))
    return magnitude, np.degrees(np.unwrap(np.angle(H), axis=0))
