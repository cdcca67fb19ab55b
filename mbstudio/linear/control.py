"""Linear models as python-control systems (the optional `control` extra: pip install mbstudio[control])."""

from __future__ import annotations

from ..model.errors import ModelError


def state_space(lin):
    """A control.StateSpace with the model's state, input and output names (`control_signal_names`)."""
    try:
        import control
    except ImportError:
        raise ModelError(
            "python-control", "is not installed", None, "pip install mbstudio[control] (or pip install control)"
        ) from None
    inputs, outputs = control_signal_names(lin.inputs, lin.outputs, lin.point.coordinates)
    states = [s.replace(".", "_") for s in lin.states]
    return control.ss(lin.A, lin.B, lin.C, lin.D, states=states, inputs=inputs, outputs=outputs)


def control_signal_names(inputs: list[str], outputs: list[str], coordinates: list[str]) -> tuple[list[str], list[str]]:
    """Input and output names for python-control, no name on both sides: `control.interconnect` joins an output
    to every input of the same name, so the force on coordinate theta1 (our input `theta1`) is `tau_theta1`
    beside the output `theta1`; any other input that an output's name still meets gets `u_` in front. A dot reads
    as `system.signal` there, so dots become underscores (5.K.fz -> 5_K_fz)."""
    out = [s.replace(".", "_") for s in outputs]
    taken = set(out)
    renamed = []
    for name in inputs:
        label = (f"tau_{name}" if name in coordinates else name).replace(".", "_")
        while label in taken:
            label = f"u_{label}"
        taken.add(label)
        renamed.append(label)
    return renamed, out
