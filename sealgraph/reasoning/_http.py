"""Moved to :mod:`sealgraph.reasoning.llm._http`."""

from sealgraph._moved import alias

alias(__name__, "sealgraph.reasoning.llm._http")
