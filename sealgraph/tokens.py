"""Moved to :mod:`sealgraph.text.tokens`."""

from sealgraph._moved import alias

alias(__name__, "sealgraph.text.tokens")
