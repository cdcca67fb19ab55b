"""Sub-commands of `mbstudio`: one module each, with HELP, add_arguments(parser) and run(args) -> exit code.

The list is explicit so that `mbstudio --help` is fast and a missing optional dependency of one command
(Qt for `screenshot`, say) does not break the others: modules are imported only when their command runs.
"""

COMMANDS = {
    "check": "structure, mobility and assembly of a model",
    "samples": "list the bundled sample models",
    "screenshot": "render the window or a panel to PNG without a screen",
    "bench": "benchmarks: ours against Pinocchio, side by side",
    "eom": "symbolic equations of motion: LaTeX and Python export",
    "kinematics": "kinematics and drive forces along a trajectory; time series to CSV or JSON",
    "simulate": "time simulation; time series to CSV or NPZ",
    "basepar": "base inertial parameters: DP, VP and symbolic side by side, with the SVD ridge",
    "sweep": "a parameter study: one analysis over a grid of model parameters, on Dask",
    "linearize": "equilibrium and linear state-space model (A, B, C, D) with modes",
    "blocks": "the model as TITOP block models (seed 004); cross-check a simulation against them",
    "import": "a mechanism from URDF or MJCF as a model file",
    "export": "a model as URDF, MJCF or an FMU",
    "pkm": "parallel machines (seed 002): limbs, task-space dynamics along platform paths, workspace maps",
    "identify": "base parameters and friction of a real mechanism from a measured log, validated on a second",
    "excite": "an exciting trajectory for identification: a Fourier series minimising cond(W_b) within limits",
}
# commands whose name is a Python keyword live in a module named after what they do
MODULES = {"import": "urdf_import"}
