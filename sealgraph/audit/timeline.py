"""Moved to :mod:`sealgraph.runs.timeline`."""

from sealgraph._moved import alias

alias(__name__, "sealgraph.runs.timeline")
