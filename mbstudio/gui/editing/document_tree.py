"""The document as a tree: model, parameters, bodies (points, frames, inertia, shape), joints (coordinates),
couplings, forces, measures, trajectories.

Each item carries a key tuple, e.g. ("body", "3"), ("point", "3", "G"), ("joint", "R01"); the properties
panel and the 3D view use the same keys, which keeps selection in sync across them.
"""

from __future__ import annotations

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QAction
from PySide6.QtWidgets import QMenu, QTreeWidget, QTreeWidgetItem, QWidget

from ...dynamics.pkm.limb import structural_cycles
from ...dynamics.pkm.topology import is_hybrid, is_linkage, structure
from ...io.display_units import SI, DisplayUnits, value_text
from ...model import GROUND, JOINT_MOTIONS, Model, ModelError
from ...model.document import turns
from ...model.units import Quantity

KEY = Qt.ItemDataRole.UserRole
# Context-menu entries per kind of item: (request name, menu text).
EDIT = [("rename", "Rename…"), ("delete", "Delete")]
MENUS = {
    "parameters": [("add_parameter", "Add parameter")],
    "parameter": EDIT,
    "bodies": [("add_body", "Add body…"), ("add_joint", "Add joint between two bodies…")],
    "body": [
        ("add_body", "Add body attached here…"),
        ("add_joint", "Add joint to another body…"),
        ("add_point", "Add point"),
        ("add_frame", "Add frame"),
        *EDIT,
    ],
    "ground": [
        ("add_body", "Add body attached here…"),
        ("add_joint", "Add joint to a body…"),
        ("add_point", "Add point"),
        ("add_frame", "Add frame"),
    ],
    "points": [("add_point", "Add point")],
    "point": EDIT,
    "frames": [("add_frame", "Add frame")],
    "frame": EDIT,
    "joints": [("add_body", "Add body…"), ("add_joint", "Add joint between two bodies…")],
    "joint": [*EDIT, ("make_compliant", "Make Compliant")],
    "coordinate": [("rename", "Rename…")],
    "forces": [("add_force", "Add force element…")],
    "force": EDIT,
    "measures": [("add_measure", "Add measure…")],
    "measure": EDIT,
    "trajectories": [("add_trajectory", "Add trajectory")],
    "trajectory": EDIT,
    "couplings": [("add_coupling", "Add coupling…")],
    "coupling": EDIT,
}


class DocumentTree(QTreeWidget):
    """`selected(key)` when the current item changes; `requested(action, key)` from the context menu."""

    selected = Signal(tuple)
    requested = Signal(str, tuple)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setHeaderLabels(["Item", "Value"])
        self.setColumnWidth(0, 200)
        self.setContextMenuPolicy(Qt.ContextMenuPolicy.CustomContextMenu)
        self.customContextMenuRequested.connect(self._menu)
        self.currentItemChanged.connect(self._current_changed)
        self.items: dict[tuple, QTreeWidgetItem] = {}
        self.units = SI  # Edit › Preferences… › Units
        self.dof: int | None = None  # the mechanism's degrees of freedom, None before it is known

    def set_units(self, units: DisplayUnits, model: Model) -> None:
        """Show the values in these units (a number written with its own unit keeps it)."""
        self.units = units
        self.rebuild(model, self.dof)

    # ------------------------------------------------------------------ building
    def rebuild(self, model: Model, dof: int | None = None) -> None:
        """Refill from the model, keeping which items were expanded and which was selected; `dof`, the
        mechanism's degrees of freedom, tells a linkage (no limbs listed) from a parallel machine."""
        self.dof = dof
        expanded = {k for k, item in self.items.items() if item.isExpanded()}
        current = self.current_key()
        self.blockSignals(True)
        self.clear()
        self.items = {}
        root = self._item(None, ("model",), model.name, "model")
        params = self._item(root, ("parameters",), "Parameters", str(len(model.parameters)))
        for p in model.parameters:
            self._item(params, ("parameter", p.name), p.name, _parameter_text(p))
        bodies = self._item(root, ("bodies",), "Bodies", str(len(model.bodies)))
        for body in [model.ground, *model.bodies]:
            self._body(bodies, body)
        joints = self._item(root, ("joints",), "Joints", str(len(model.joints)))
        for j in model.joints:
            item = self._item(joints, ("joint", j.name), j.name, f"{j.type} {j.parent}–{j.child}")
            for c, unit in _coordinates(j):
                self._item(item, ("coordinate", j.name, c.name), c.name, self._text([c.initial], unit))
        couplings = self._item(root, ("couplings",), "Couplings", str(len(model.couplings)))
        for c in model.couplings:
            self._item(couplings, ("coupling", c.name), c.name, c.formula())
        forces = self._item(root, ("forces",), "Forces", str(len(model.forces)))
        for f in model.forces:
            self._item(forces, ("force", f.name), f.name, f.type.replace("_", " "))
        measures = self._item(root, ("measures",), "Measures", str(len(model.measures)))
        for m in model.measures:
            self._item(measures, ("measure", m.name), m.name, m.type)
        if model.road is not None:
            shape = "formula" if model.road.formula is not None else "grid" if model.road.surface else "profile"
            self._item(root, ("road",), "Road", shape)
        self._limbs(root, model)
        trajectories = self._item(root, ("trajectories",), "Trajectories", str(len(model.trajectories)))
        for t in model.trajectories:
            self._item(trajectories, ("trajectory", t.name), t.name, f"{t.duration:g} s, {t.samples} samples")
        for key in expanded or {("model",), ("bodies",), ("joints",), ("parameters",), ("couplings",)}:
            if key in self.items:
                self.items[key].setExpanded(True)
        self.blockSignals(False)
        self.select(current if current in self.items else ("model",))

    def _body(self, parent: QTreeWidgetItem, body) -> None:
        ground = body.label == GROUND
        item = self._item(
            parent,
            ("ground",) if ground else ("body", body.label),
            "ground" if ground else f"{body.label}: {body.name}",
            "" if ground else body.label,
        )
        points = self._item(item, ("points", body.label), "Points", str(len(body.points)))
        for name, p in body.points.items():
            self._item(points, ("point", body.label, name), name, self._text(p, "m"))
        frames = self._item(item, ("frames", body.label), "Frames", str(len(body.frames)))
        for name, frame in body.frames.items():
            origin = frame.origin if isinstance(frame.origin, str) else self._text(frame.origin, "m")
            self._item(frames, ("frame", body.label, name), name, f"at {origin}")
        if not ground:
            self._item(item, ("inertia", body.label), "Inertia", f"m = {value_text(body.inertia['m'], 'kg', SI)}")
            self._item(item, ("shape", body.label), "Shape", (body.shape or {}).get("type", "(links)"))

    def _limbs(self, root: QTreeWidgetItem, model: Model) -> None:
        """A parallel machine's limbs and their fundamental cycles (Müller 2021); selecting one highlights its
        bodies in the 3D view (the key carries them). Nothing for other models, a linkage among them: a four-bar's
        coupler is no platform."""
        if self.dof is not None and is_linkage(model, self.dof):
            return
        try:
            found = structure(model)
            cycles = [structural_cycles(model, limb, found.platform) for limb in found.limbs] if found else []
        except ModelError:
            return
        if found is None:
            return
        limbs = self._item(root, ("limbs",), "Limbs", f"{len(found.limbs)}, platform {found.platform}")
        for limb, loops in zip(found.limbs, cycles, strict=True):
            kind = "hybrid" if is_hybrid(loops) else "loops coupled"
            item = self._item(limbs, ("limb", limb.name, *limb.bodies), limb.name, f"{len(loops)} cycle(s), {kind}")
            for cycle in loops:
                key = ("cycle", limb.name, cycle.cut, *cycle.bodies)
                self._item(item, key, f"cycle cut at {cycle.cut}", " – ".join(cycle.bodies))

    def show_pose(self, model: Model) -> None:
        """The coordinates' initial values (the shown pose) again, after a slider move or its undo."""
        for j in model.joints:
            for c, unit in _coordinates(j):
                item = self.items.get(("coordinate", j.name, c.name))
                if item is not None:
                    item.setText(1, self._text([c.initial], unit))

    def _item(self, parent, key: tuple, text: str, value: str) -> QTreeWidgetItem:
        item = QTreeWidgetItem([text, value])
        item.setData(0, KEY, key)
        if parent is None:
            self.addTopLevelItem(item)
        else:
            parent.addChild(item)
        self.items[key] = item
        return item

    # ------------------------------------------------------------------ selection
    def current_key(self) -> tuple | None:
        item = self.currentItem()
        return None if item is None else item.data(0, KEY)

    def select(self, key: tuple) -> None:
        """Make `key` current (emits `selected` if it changes)."""
        item = self.items.get(key)
        if item is not None and item is not self.currentItem():
            self.setCurrentItem(item)
            self.scrollToItem(item)

    def _current_changed(self, item: QTreeWidgetItem | None, _previous) -> None:
        if item is not None:
            self.selected.emit(item.data(0, KEY))

    def _menu(self, position) -> None:
        item = self.itemAt(position)
        if item is None:
            return
        key = item.data(0, KEY)
        entries = MENUS.get(key[0], [])
        if not entries:
            return
        menu = QMenu(self)
        for request, text in entries:
            action = QAction(text, menu)
            action.triggered.connect(lambda _=False, r=request, k=key: self.requested.emit(r, k))
            menu.addAction(action)
        menu.exec(self.viewport().mapToGlobal(position))

    def _text(self, values: list, si: str) -> str:
        """Values of SI unit `si` in the display unit, which follows them when it is not SI: plain numbers to 6
        digits there (a coordinate's to 4, also in SI), numbers written with a unit and expressions as
        written."""
        shown, size = self.units.unit(si)
        digits = 4 if len(values) == 1 else 6

        def one(v) -> str:
            rounded = v is not None and not isinstance(v, Quantity | str) and (size != 1.0 or digits == 4)
            return f"{v / size:.{digits}g}" if rounded else value_text(v, si, self.units)

        plain = any(v is not None and not isinstance(v, Quantity | str) for v in values)
        text = ", ".join(one(v) for v in values)
        return f"{text} {shown}" if plain and shown != si else text


def _coordinates(joint) -> list[tuple]:
    """A joint's coordinates with their SI units ("rad" for a rotation, "m" for a translation)."""
    motions = JOINT_MOTIONS.get(joint.type, ())
    units = ["rad" if turns(m) else "m" for m in motions]
    return list(zip(joint.coordinates, units + ["m"] * (len(joint.coordinates) - len(units)), strict=False))


def _parameter_text(p) -> str:
    """A parameter's value in its own unit, as the file writes it."""
    if not p.unit:
        return f"{p.value:g}"
    value = p.value if isinstance(p.value, Quantity) and p.value.unit == p.unit else Quantity.from_si(p.value, p.unit)
    return value.text()
