"""Results as strict JSON text: numpy arrays and scalars become lists and numbers, and the non-finite
values a spectrum can hold (log10 0 = -inf) become the strings "inf", "-inf" and "nan", which every JSON
reader accepts (bare Infinity and NaN are not JSON)."""

from __future__ import annotations

import json
import math

import numpy as np


def plain(value: object) -> object:
    """`value` with containers and numpy types turned into JSON's own, non-finite numbers into strings."""
    if isinstance(value, dict):
        return {str(k): plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple, np.ndarray)):
        return [plain(v) for v in value]
    if isinstance(value, (np.integer, np.bool_)):
        return value.item()
    if isinstance(value, (float, np.floating)):
        x = float(value)
        return x if math.isfinite(x) else str(x)
    if value is None or isinstance(value, (str, int, bool)):
        return value
    return str(value)


def json_text(value: object) -> str:
    return json.dumps(plain(value), indent=1, allow_nan=False, ensure_ascii=False) + "\n"
