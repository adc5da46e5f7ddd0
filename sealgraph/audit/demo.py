"""Moved to :mod:`sealgraph.examples.demo`."""

from sealgraph._moved import alias

alias(__name__, "sealgraph.examples.demo")
