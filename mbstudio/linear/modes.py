"""The modes of a linear model: eigenvalues, natural frequencies, damping ratios and mode shapes in every
coordinate of the mechanism (through R = ∂q/∂q_ind), and closed poses along a shape for its animation.

    for mode in modes(lin):
        mode.frequency_hz, mode.damping, mode.shape          # shape (n,) complex, every tree coordinate
    poses = mode_poses(model, lin, modes(lin)[0])           # (frames, n): the loops closed at every frame

One mode per conjugate pair (the eigenvalue with Im λ > 0) and one per real eigenvalue, lowest |λ| first.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..dynamics.engine import engine
from ..model import Model
from ..model.errors import AssemblyError
from .linear_model import LinearModel

FRAMES = 24
SWING = 0.15  # rad: how far the largest coordinate moves in an animation (a length: this times the mechanism size)
REAL = 1e-9  # |Im λ| below this fraction of |λ|: a real eigenvalue
NEUTRAL = 1e-7  # |λ| below this (1/s) and stiffness singular values below this fraction: neutral


@dataclass
class Mode:
    eigenvalue: complex
    shape: np.ndarray  # (n,) complex: every tree coordinate, the largest (scaled) component 1
    dominant: str  # the independent coordinate that moves most

    @property
    def frequency_hz(self) -> float:
        """The undamped natural frequency |λ| / 2π."""
        return abs(self.eigenvalue) / (2 * np.pi)

    @property
    def damped_hz(self) -> float:
        """The frequency of the oscillation, |Im λ| / 2π (0 for a real eigenvalue)."""
        return abs(self.eigenvalue.imag) / (2 * np.pi)

    @property
    def damping(self) -> float:
        """ζ = −Re λ / |λ|; NaN for λ = 0 (a neutral direction)."""
        size = abs(self.eigenvalue)
        return -self.eigenvalue.real / size if size > 0 else float("nan")

    @property
    def kind(self) -> str:
        if self.eigenvalue == 0:
            return "neutral"
        return "real" if abs(self.eigenvalue.imag) <= REAL * abs(self.eigenvalue) else "oscillation"

    @property
    def stability(self) -> str:
        margin, real = REAL * max(abs(self.eigenvalue), 1.0), self.eigenvalue.real
        return "stable" if real < -margin else "unstable" if real > margin else "marginal"

    def to_dict(self) -> dict:
        return {
            "eigenvalue_real": self.eigenvalue.real,
            "eigenvalue_imag": self.eigenvalue.imag,
            "frequency_hz": self.frequency_hz,
            "damped_hz": self.damped_hz,
            "damping": self.damping,
            "kind": self.kind,
            "stability": self.stability,
            "dominant": self.dominant,
            "shape_real": self.shape.real,
            "shape_imag": self.shape.imag,
        }


def modes(lin: LinearModel) -> list[Mode]:
    """The oscillations and real modes (eigenvalues of A), and one neutral mode per direction along which
    nothing pulls the mechanism back (the null space of ∂q̈/∂q_ind), whose eigenvalue 0 may be double."""
    k = len(lin.point.independent)
    values, vectors = np.linalg.eig(lin.A)
    out = [_mode(lin, 0j, phi) for phi in _null_space(lin.A[k:, :k]).T]
    for value, vector in zip(values, vectors.T, strict=True):
        if abs(value) < NEUTRAL or value.imag < -REAL * abs(value):
            continue  # an eigenvalue 0 of a neutral mode above, or the conjugate of a mode kept
        real = abs(value.imag) <= REAL * abs(value)
        out.append(_mode(lin, complex(value.real, 0.0) if real else complex(value), vector[:k]))
    return sorted(out, key=lambda m: (abs(m.eigenvalue), -m.eigenvalue.real))


def _mode(lin: LinearModel, value: complex, phi: np.ndarray) -> Mode:
    """The mode with independent-coordinate shape φ, scaled so its largest (weighted) component is 1."""
    scaled = phi * _weights(lin)[lin.independent_indices]
    largest = int(np.abs(scaled).argmax())
    return Mode(value, lin.R @ (phi / scaled[largest]), lin.point.independent[largest])


def _null_space(stiffness: np.ndarray) -> np.ndarray:
    _, sigma, vt = np.linalg.svd(stiffness)
    return vt[sigma <= NEUTRAL * max(sigma.max(initial=0.0), 1.0)].T


def mode_poses(model: Model, lin: LinearModel, mode: Mode, frames: int = FRAMES) -> np.ndarray:
    """Closed configurations (frames, n) over one period of the mode about the operating point: the
    independent coordinates move along Re(φ e^{iθ}) (φ sin θ for a real mode), the loops are closed at every
    frame; the swing is halved until every frame closes."""
    eng = engine(model)
    swing = SWING / np.abs(mode.shape * _weights(lin)).max()
    theta = np.linspace(0, 2 * np.pi, frames, endpoint=False)
    path = np.exp(1j * theta) if mode.kind == "oscillation" else np.sin(theta)
    for _ in range(6):
        try:
            # the predictor q + R φ moves the independent coordinates exactly; Newton closes the loops
            return np.array([eng.close_loops(lin.q + swing * (mode.shape * z).real)[0] for z in path])
        except AssemblyError:
            swing /= 2
    return np.repeat(lin.q[None, :], frames, axis=0)


def _weights(lin: LinearModel) -> np.ndarray:
    """Per tree coordinate, 1 / its scale: a shape's largest component compares rotations with translations."""
    return 1.0 / lin.scales
