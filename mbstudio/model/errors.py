"""The error every layer raises for bad input: it names the place, the value and what would be valid."""

from __future__ import annotations


class ModelError(ValueError):
    """A problem a person can fix: `where` names the body, joint or field, `value` what was found,
    `expected` what would be valid."""

    def __init__(self, where: str, problem: str, value: object = None, expected: str | None = None):
        self.where = where
        self.problem = problem
        self.value = value
        self.expected = expected
        text = f"{where}: {problem}"
        if value is not None:
            text += f" (got {value!r})"
        if expected:
            text += f"; expected {expected}"
        super().__init__(text)


class AssemblyError(RuntimeError):
    """The loop equations could not be solved; names the loop (cut joint) and the residual left."""

    def __init__(self, message: str, joint: str | None = None, residual: float | None = None):
        self.joint = joint
        self.residual = residual
        super().__init__(message)
