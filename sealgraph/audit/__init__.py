"""Moved to :mod:`sealgraph.runs` (run persistence and the audit trail).

``sealgraph.audit.<module>`` still imports, with a deprecation warning:
``checkpointers``, ``branches``, ``replay``, ``stepping``, ``timeline`` are in
:mod:`sealgraph.runs`; ``runs`` is :mod:`sealgraph.runs.threads`; ``demo`` is
:mod:`sealgraph.examples.demo`; ``paths`` is :mod:`sealgraph.paths`.
"""
