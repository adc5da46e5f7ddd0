"""The version of sealgraph (ground floor: the index records it without importing the package root)."""

__version__ = "0.1.0"
