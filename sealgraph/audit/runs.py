"""Moved to :mod:`sealgraph.runs.threads`."""

from sealgraph._moved import alias

alias(__name__, "sealgraph.runs.threads")
