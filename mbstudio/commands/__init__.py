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
    "blocks": "the model as TITOP block models (Alazard et al. 2024); cross-check a simulation against them",
    "import": "a mechanism from URDF or MJCF as a model file",
    "export": "a model as URDF, MJCF or an FMU",
    "pkm": "parallel machines (Müller 2021): limbs, task-space dynamics along platform paths, workspace maps",
    "report": "the suspension report: kinematic curves against wheel travel as PDF, PNG or SVG, and CSV",
    "identify": "base parameters and friction of a real mechanism from a measured log, checked on a second log",
    "excite": "an exciting trajectory for identification: a Fourier series minimising cond(W_b) within limits",
    "manoeuvre": "handling manoeuvres on Magic Formula tyres: cornering, step steer, sine with dwell, lane change",
    "legged": "a legged robot (solo12) on the ground under joint PD control, standing or trotting",
    "kc": "a suspension corner on a K&C rig: kinematics and compliance as CSV, a PDF report and JSON",
    "cache": "the engine cache: its size, and removing the engines not used lately",
}
# one example per command, shown at the end of its --help (the samples' paths are those of a clone)
EXAMPLES = {
    "check": "mbstudio check samples/sla_suspension.mbs --json",
    "samples": "mbstudio samples",
    "screenshot": "mbstudio screenshot samples/four_bar.mbs view.png --panel 3d --size 1280x800",
    "bench": "mbstudio bench --only drag",
    "eom": "mbstudio eom samples/four_bar.mbs --latex eom.tex --c four_bar_c",
    "kinematics": "mbstudio kinematics samples/sla_suspension.mbs --samples 101 --out series.csv --units deg,mm",
    "simulate": "mbstudio simulate samples/four_bar.mbs --t-end 2 --velocity theta1=6 --out run.csv",
    "basepar": "mbstudio basepar samples/sla_suspension.mbs --method all --json base.json",
    "sweep": "mbstudio sweep samples/four_bar.mbs --vary L1=0.08:0.12:5 --analysis base_parameters --out study.csv",
    "linearize": "mbstudio linearize samples/slider_crank.mbs --out model.mat",
    "blocks": "mbstudio blocks samples/balloon.mbs --t-end 2",
    "import": "mbstudio import robot.urdf -o robot.mbs --fixed-base",
    "export": "mbstudio export samples/puma560.mbs --urdf puma560.urdf",
    "pkm": "mbstudio pkm samples/irsbot2.mbs --trajectory pick_and_place --out efforts.csv",
    "report": "mbstudio report samples/sla_suspension.mbs --out report.pdf",
    "identify": "mbstudio identify samples/double_pendulum.mbs --data log.csv --validate log2.csv",
    "excite": "mbstudio excite samples/double_pendulum.mbs --duration 10 --out traj.csv",
    "manoeuvre": "mbstudio manoeuvre samples/vehicle_handling.mbs --kind step_steer --speed 20 --out step.csv",
    "legged": "mbstudio legged --gait trot -o solo12_trot.mbs",
    "kc": "mbstudio kc samples/sla_suspension_bushed.mbs --out kc.csv --report kc.pdf",
    "cache": "mbstudio cache --unused-days 30",
}
# commands that compute: each takes --quiet (no progress or notes on stderr) whether or not it reports progress
COMPUTING = set(COMMANDS) - {"samples", "screenshot", "bench", "cache"}
# commands whose name is a Python keyword live in a module named after what they do
MODULES = {"import": "urdf_import"}
