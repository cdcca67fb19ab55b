"""MB Studio: mechanism analysis in double precision, variable precision and symbolic arithmetic."""

__version__ = "0.1.0"
