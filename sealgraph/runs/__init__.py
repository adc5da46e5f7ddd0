"""Run persistence and the audit trail: checkpoint stores, timelines, replay and stepping.

* :mod:`sealgraph.runs.checkpointers`: open the store named by ``--db`` (SQLite or PostgreSQL).
* :mod:`sealgraph.runs.threads`: thread ids, run configs, rebuilding the graph of a stored run.
* :mod:`sealgraph.runs.branches`: a thread's original run and the forks replays made of it.
* :mod:`sealgraph.runs.timeline`: render a run's events for people.
* :mod:`sealgraph.runs.page`: a run as one self-contained HTML page (``trace --html``);
  :func:`render_run_page` and :func:`write_run_page` are importable from here.
* :mod:`sealgraph.runs.replay`: fork a run at a checkpoint with changed config.
* :mod:`sealgraph.runs.stepping`: pause before every node (``--step``).
"""

from __future__ import annotations

# Cheap to import (the standard library only): the page is the runs' public face.
from sealgraph.runs.page import render_run_page, write_run_page

__all__ = ["render_run_page", "write_run_page"]
