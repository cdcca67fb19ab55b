"""Linear models as python-control systems (the optional `control` extra: pip install mbstudio[control])."""

from __future__ import annotations

from ..model.errors import ModelError


def state_space(lin):
    """A control.StateSpace with the model's state, input and output names. python-control reads a dot in a
    signal name as `system.signal`, so dots become underscores there (5.K.fz -> 5_K_fz)."""
    try:
        import control
    except ImportError:
        raise ModelError(
            "python-control", "is not installed", None, "pip install mbstudio[control] (or pip install control)"
        ) from None

    def names(signals: list[str]) -> list[str]:
        return [s.replace(".", "_") for s in signals]

    return control.ss(
        lin.A, lin.B, lin.C, lin.D, states=names(lin.states), inputs=names(lin.inputs), outputs=names(lin.outputs)
    )
