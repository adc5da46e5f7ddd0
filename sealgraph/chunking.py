"""Moved to :mod:`sealgraph.text.chunking`."""

from sealgraph._moved import alias

alias(__name__, "sealgraph.text.chunking")
