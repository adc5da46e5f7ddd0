"""Moved to :mod:`sealgraph.runs.checkpointers`."""

from sealgraph._moved import alias

alias(__name__, "sealgraph.runs.checkpointers")
