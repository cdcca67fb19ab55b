"""The integration method of a run whose caller chose none ("auto"), decided from the model alone.

A compliant contact's regularised friction is a damper of μ f_n / v_s below the stiction velocity (docs/contact.md):
on a light foot its time constant falls to microseconds, which Adams' fixed-point iterations can only follow in
steps as short (solo12 trotting: 0.22x real time, against 4x with BDF and Newton's iterations). A model with
compliant contact elements (ground contacts, contact pairs) therefore runs on CVODES-BDF; every other model on
CVODES (Adams), the default whose error estimates and samples the rest of the documentation measures. The rigid
contact model steps by Moreau's method, where the method does not apply. A method the caller names always wins.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..model import Model

AUTO = "auto"  # the method chosen from the model
DEFAULT = "CVODES"  # Adams: models without compliant contacts
STIFF = "CVODES-BDF"  # models with compliant contacts
CONTACT_ELEMENTS = ("contact", "contact_pair")  # the compliant contact elements' types (model/document.py)


@dataclass(frozen=True)
class MethodChoice:
    """The method a run uses and, where the model chose it otherwise than the plain default, why."""

    method: str
    reason: str = ""  # empty: the caller's method, or CVODES for a model without compliant contacts


def chosen_method(model: Model, method: str | None = AUTO, contact: str = "compliant") -> MethodChoice:
    """The method of a run of `model`: `method` itself unless it is AUTO or None; else CVODES-BDF where the model
    has compliant contact elements integrated as forces (`contact` "compliant"), CVODES otherwise."""
    if method not in (None, AUTO):
        return MethodChoice(method)
    count = compliant_contacts(model) if contact == "compliant" else 0
    if not count:
        return MethodChoice(DEFAULT)
    return MethodChoice(STIFF, f"chosen for the stiff friction of {count} compliant contact{'s' * (count > 1)}")


def compliant_contacts(model: Model) -> int:
    """How many of the model's force elements are compliant contacts (ground contacts and contact pairs)."""
    return sum(element.type in CONTACT_ELEMENTS for element in model.forces)
