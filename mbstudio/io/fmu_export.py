"""A mechanism as an FMU (FMI 2.0, Model Exchange and Co-Simulation in one archive) for Simulink, Modelica tools,
Simscape and every importer of the standard.

    data, notes = fmu_archive(model)            # the .fmu file's bytes, and what it could not carry
    data, notes = fmu_archive(model, inputs=["push"], outputs=["coupler.x"])

Built from the C export (io/c_code.py): the compiled engine's state equation y = (q, q̇_ind) -> ẏ, the loops closed
by Newton steps inside, and the outputs traced by linear/signals.py, generated as C by CasADi and compiled with the
system's C compiler into a shared library for this machine, beside an FMI wrapper of our own (io/fmu_wrapper.py)
and the sources. Inputs: the document's actuators (their formulas give way to the input) and generalized forces on
coordinates named as inputs; outputs: every coordinate, every coordinate's rate `d_<name>`, and the outputs asked
(measures' parts, points); parameters: the start values of the independent coordinates and their rates, and the
internal step of Co-Simulation; the model's own parameters are constants (they are compiled in).
"""

from __future__ import annotations

import hashlib
import io
import platform
import shutil
import subprocess
import tempfile
import time
import uuid
import xml.etree.ElementTree as ET
import zipfile
from dataclasses import dataclass
from pathlib import Path

import casadi
import numpy as np

from .. import __version__
from ..dynamics.engine import TooLarge, engine
from ..dynamics.force_laws import law_class
from ..linear.signals import Outputs, input_signals, output_signals
from ..model import Model, ModelError, dumps
from .c_code import c_function, c_stem
from .fmu_wrapper import WRAPPER

INTERNAL_STEP = 1e-3  # s: Co-Simulation's Runge-Kutta step at most (a parameter of the FMU)
CLOSURE_LIMIT = 1e-6  # the largest loop-closure residual a state may have before the FMU reports an error


@dataclass
class _Variable:
    name: str
    causality: str
    variability: str
    initial: str | None
    start: float | None
    unit: str
    description: str
    derivative: int | None = None  # the 1-based index of the state this is the derivative of


def platform_folder() -> str:
    """FMI's name for this machine's binaries folder: linux64, darwin64 or win64."""
    system = {"Linux": "linux", "Darwin": "darwin", "Windows": "win"}.get(platform.system(), platform.system().lower())
    return f"{system}{64 if platform.architecture()[0] == '64bit' else 32}"


def fmu_archive(
    model: Model, inputs: list[str] | None = None, outputs: list[str] = (), compiler: str | None = None
) -> tuple[bytes, list[str]]:
    """The FMU of `model` as the bytes of a zip archive, and notes; ModelError for names that are not inputs or
    outputs of the model, or when there is no C compiler."""
    compiler = compiler or shutil.which("cc") or shutil.which("gcc")
    if compiler is None:
        raise ModelError("FMU", "needs a C compiler, and none was found", None, "cc or gcc on the PATH")
    return _Builder(model, inputs, list(outputs)).archive(compiler)


class _Builder:
    def __init__(self, model: Model, inputs: list[str] | None, outputs: list[str]) -> None:
        self.notes: list[str] = []
        self.source = model
        actuators = [f.name for f in model.forces if law_class(f).actuated]
        self.inputs = actuators if inputs is None else list(inputs)
        input_signals(model, self.inputs)  # names checked against the model before any work
        self.model = self._driven(model)
        try:
            self.eng = engine(self.model)
            self.eng.refuse_law_states("an FMU")
        except TooLarge as exc:
            raise ModelError(f"model '{model.name}'", "is too large for an FMU", str(exc), "a smaller model") from None
        if self.eng.states.quaternions:  # the wrapper's state is (q, q̇_ind); engine.pack gives the other layout
            turning = [j.name for j in self.eng.mech.tree.topology.tree if j.type in ("ball", "free")]
            raise ModelError(
                f"model '{model.name}'",
                f"has ball or free joints ({', '.join(turning)}), whose orientation the engine integrates as a "
                "quaternion, a state this FMU export does not write yet",
                turning,
                "revolute, prismatic, spherical or free_euler joints for an FMU",
            )
        mech = self.eng.mech
        self.coordinates, self.independent = list(mech.coordinates), list(mech.independent)
        self.rates = [f"d_{c}" for c in self.coordinates]
        extra = [name for name in outputs if name not in self.coordinates + self.rates]
        self.outputs = self.coordinates + self.rates + extra
        self.signals = output_signals(self.model, self.outputs)
        self.identifier = c_stem(model.name).lower()[:40] or "model"

    def _driven(self, model: Model) -> Model:
        """The model whose actuators named as inputs push with zero: the input is added as their force."""
        driven = model.copy()
        for force in driven.forces:
            if law_class(force).actuated and force.name in self.inputs:
                law_class(force).idle(force)
                self.notes.append(f"actuator '{force.name}': its formula or table gives way to the FMU's input")
        return driven

    # ------------------------------------------------------------------ C sources

    def functions(self) -> list[casadi.Function]:
        traced = Outputs(self.eng, self.outputs[2 * len(self.coordinates) :])
        t, q, v, tau = traced.t, traced.q, traced.v, traced.tau
        y = casadi.vertcat(q, traced.qd, *[traced.expression(r) for r in traced.recipes])
        outputs = casadi.Function("outputs", [t, q, v, tau], [y], ["t", "q", "qd_ind", "tau"], ["y"])
        return [c_function(self.eng.state_equation, "mbs_state_equation"), c_function(outputs, "mbs_outputs")]

    def input_coordinates(self) -> list[int]:
        """The tree coordinate each input's force acts on."""
        by_name = {f.name: f for f in self.model.forces}
        return [self.coordinates.index(by_name[n].coordinate if n in by_name else n) for n in self.inputs]

    def header(self, guid: str) -> str:
        q0 = self.eng.mech.assemble(None)[0]
        state = np.concatenate([q0, np.zeros(len(self.independent))])
        starts = self.parameter_starts(state)
        constants = [p.value for p in self.model.parameters]
        lines = [
            f'#define MODEL_GUID "{guid}"',
            f"#define NQ {len(self.coordinates)}",
            f"#define NX {len(state)}",
            f"#define NU {len(self.inputs)}",
            f"#define NY {len(self.outputs)}",
            f"#define NP {len(starts)}",
            f"#define NC {len(constants)}",
            f"#define INTERNAL_STEP {INTERNAL_STEP!r}",
            f"#define CLOSURE_LIMIT {CLOSURE_LIMIT!r}",
            "#define MODEL_STATE_EQUATION mbs_state_equation",
            "#define MODEL_STATE_EQUATION_WORK mbs_state_equation_work",
            "#define MODEL_OUTPUTS mbs_outputs",
            "#define MODEL_OUTPUTS_WORK mbs_outputs_work",
            f"static const double INITIAL_STATE[NX + 1] = {{{_c_numbers(state)}}};",
            f"static const int INPUT_COORDINATE[NU + 1] = {{{', '.join(map(str, self.input_coordinates())) or 0}}};",
            f"static const double PARAMETER_START[NP + 1] = {{{_c_numbers([v for _, v, _ in starts])}}};",
            f"static const int PARAMETER_STATE[NP + 1] = {{{', '.join(str(i) for _, _, i in starts) or 0}}};",
            f"static const double CONSTANTS[NC + 1] = {{{_c_numbers(constants)}}};",
        ]
        return "/* generated by MB Studio for the FMU of one model */\n" + "\n".join(lines) + "\n"

    def parameter_starts(self, state: np.ndarray) -> list[tuple[str, float, int]]:
        """(name, start value, state index) of each start parameter: independent coordinates, then their rates."""
        n = len(self.coordinates)
        positions = [(f"start.{c}", float(state[self.coordinates.index(c)]), self.coordinates.index(c))
                     for c in self.independent]  # fmt: skip
        rates = [(f"start.d_{c}", 0.0, n + k) for k, c in enumerate(self.independent)]
        return positions + rates

    # ------------------------------------------------------------------ model description

    def variables(self) -> list[_Variable]:
        units = dict(zip(self.outputs, (s.unit for s in self.signals), strict=True))
        in_units = [s.unit for s in input_signals(self.model, self.inputs)]
        mech = self.eng.mech
        state_names = self.coordinates + [f"d_{c}" for c in self.independent]
        state_units = [units[c] for c in self.coordinates] + [units[f"d_{c}"] for c in self.independent]
        rate_units = [units[f"d_{c}"] for c in self.coordinates] + [_rate(units[f"d_{c}"]) for c in self.independent]
        out = [_Variable(n, "input", "continuous", None, 0.0, u, "input force") for n, u in zip(self.inputs, in_units,
               strict=True)]  # fmt: skip
        out += [_Variable(n, "output", "continuous", "calculated", None, units[n], _what(n, self.coordinates))
                for n in self.outputs]  # fmt: skip
        first_state = len(out) + 1
        out += [_Variable(f"state.{n}", "local", "continuous", "calculated", None, u, "state")
                for n, u in zip(state_names, state_units, strict=True)]  # fmt: skip
        derivatives = enumerate(zip(state_names, rate_units, strict=True))
        out += [_Variable(f"der(state.{n})", "local", "continuous", "calculated", None, u, "state derivative",
                          first_state + k) for k, (n, u) in derivatives]  # fmt: skip
        state = np.concatenate([mech.assemble(None)[0], np.zeros(len(self.independent))])
        for name, value, index in self.parameter_starts(state):
            unit = state_units[index]
            out.append(_Variable(name, "parameter", "fixed", "exact", value, unit, "start value (loops closed at it)"))
        out.append(_Variable("internal_step", "parameter", "fixed", "exact", INTERNAL_STEP, "s",
                             "Co-Simulation: the longest Runge-Kutta step inside a communication step"))  # fmt: skip
        out += [_Variable(p.name, "local", "constant", "exact", p.value, p.unit or "", p.description or "parameter")
                for p in self.model.parameters]  # fmt: skip
        return out

    def description(self, guid: str) -> str:
        variables = self.variables()
        root = ET.Element(
            "fmiModelDescription",
            fmiVersion="2.0",
            modelName=self.source.name,
            guid=guid,
            description=" ".join(self.source.description.split())[:500],
            generationTool=f"MB Studio {__version__}",
            generationDateAndTime=time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
            variableNamingConvention="flat",
            numberOfEventIndicators="0",
        )
        sources = ("model.c", "fmu.c")
        kinds = (("ModelExchange", {}), ("CoSimulation", {"canHandleVariableCommunicationStepSize": "true"}))
        for kind, extra in kinds:
            element = ET.SubElement(root, kind, modelIdentifier=self.identifier, **extra)
            files = ET.SubElement(element, "SourceFiles")
            for name in sources:
                ET.SubElement(files, "File", name=name)
        units = ET.SubElement(root, "UnitDefinitions")
        for unit in sorted({v.unit for v in variables if v.unit}):
            ET.SubElement(units, "Unit", name=unit)
        ET.SubElement(root, "DefaultExperiment", startTime="0.0", stopTime="1.0", tolerance="1e-08")
        listed = ET.SubElement(root, "ModelVariables")
        for vr, v in enumerate(variables):
            attributes = {"name": v.name, "valueReference": str(vr), "description": v.description,
                          "causality": v.causality, "variability": v.variability}  # fmt: skip
            if v.initial:
                attributes["initial"] = v.initial
            scalar = ET.SubElement(listed, "ScalarVariable", attributes)
            real = {"unit": v.unit} if v.unit else {}
            if v.start is not None:
                real["start"] = repr(float(v.start))
            if v.derivative is not None:
                real["derivative"] = str(v.derivative)
            ET.SubElement(scalar, "Real", real)
        structure = ET.SubElement(root, "ModelStructure")
        index = {v.name: k + 1 for k, v in enumerate(variables)}
        groups = {
            "Outputs": [index[n] for n in self.outputs],
            "Derivatives": [k + 1 for k, v in enumerate(variables) if v.derivative is not None],
        }
        groups["InitialUnknowns"] = sorted(
            groups["Outputs"] + groups["Derivatives"] + [index[v.name] for v in variables if v.description == "state"]
        )
        for group, indices in groups.items():
            element = ET.SubElement(structure, group)
            for k in indices:
                ET.SubElement(element, "Unknown", index=str(k))
        ET.indent(root, space="  ")
        return ET.tostring(root, encoding="unicode", xml_declaration=True) + "\n"

    # ------------------------------------------------------------------ the archive

    def archive(self, compiler: str) -> tuple[bytes, list[str]]:
        text = dumps(self.source)
        guid = "{" + str(uuid.UUID(hashlib.sha256(text.encode()).hexdigest()[:32])) + "}"
        with tempfile.TemporaryDirectory() as work:
            folder = Path(work)
            generator = casadi.CodeGenerator("model.c", {"with_header": True})
            for function in self.functions():
                generator.add(function)
            generator.generate(work + "/")
            (folder / "fmu_model.h").write_text(self.header(guid))
            (folder / "fmu.c").write_text(WRAPPER)
            library = folder / f"{self.identifier}{_suffix()}"
            build = [compiler, "-shared", "-fPIC", "-O1", "-fvisibility=hidden", "-o", str(library),
                     str(folder / "model.c"), str(folder / "fmu.c"), "-lm"]  # fmt: skip
            done = subprocess.run(build, capture_output=True, text=True, timeout=3600)
            if done.returncode != 0:
                raise ModelError("FMU", "did not compile", done.stderr[-2000:], "a working C compiler (cc or gcc)")
            buffer = io.BytesIO()
            with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as fmu:
                fmu.writestr("modelDescription.xml", self.description(guid))
                fmu.write(library, f"binaries/{platform_folder()}/{library.name}")
                for name in ("model.c", "model.h", "fmu_model.h", "fmu.c"):
                    fmu.write(folder / name, f"sources/{name}")
        self.notes.append(f"binaries for {platform_folder()} only (this machine); the sources are in the archive")
        return buffer.getvalue(), self.notes


def _suffix() -> str:
    return {"Darwin": ".dylib", "Windows": ".dll"}.get(platform.system(), ".so")


def _c_numbers(values) -> str:
    return ", ".join(repr(float(v)) for v in values) or "0.0"


def _rate(unit: str) -> str:
    """The unit of a rate's rate: rad/s -> rad/s^2."""
    return f"{unit}^2" if unit.endswith("/s") else f"{unit}/s"


def _what(name: str, coordinates: list[str]) -> str:
    if name in coordinates:
        return "coordinate (loops closed)"
    if name.startswith("d_") and name[2:] in coordinates:
        return "coordinate rate"
    return "output"
