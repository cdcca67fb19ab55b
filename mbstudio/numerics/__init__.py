"""Scalar back-ends and the small geometry helpers written once over them."""

from .backends import Backend, Float64, MultiPrecision, Symbolic, as_mpf, make_backend

__all__ = ["Backend", "Float64", "MultiPrecision", "Symbolic", "as_mpf", "make_backend"]
