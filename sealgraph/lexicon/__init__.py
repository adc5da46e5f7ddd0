"""Moved to :mod:`sealgraph.text.lexicon`."""

from sealgraph._moved import alias

alias(__name__, "sealgraph.text.lexicon", submodules=("english",))
