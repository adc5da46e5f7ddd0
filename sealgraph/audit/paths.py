"""Moved to :mod:`sealgraph.paths`."""

from sealgraph._moved import alias

alias(__name__, "sealgraph.paths")
