"""Moved to :mod:`sealgraph.runs.stepping`."""

from sealgraph._moved import alias

alias(__name__, "sealgraph.runs.stepping")
