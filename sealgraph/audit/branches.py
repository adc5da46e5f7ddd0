"""Moved to :mod:`sealgraph.runs.branches`."""

from sealgraph._moved import alias

alias(__name__, "sealgraph.runs.branches")
