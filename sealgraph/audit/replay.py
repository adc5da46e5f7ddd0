"""Moved to :mod:`sealgraph.runs.replay`."""

from sealgraph._moved import alias

alias(__name__, "sealgraph.runs.replay")
