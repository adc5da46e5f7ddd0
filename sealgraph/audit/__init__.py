"""Run persistence and the audit trail: checkpoint stores, timelines, replay and stepping.

* :mod:`sealgraph.audit.checkpointers`: open the store named by ``--db`` (SQLite or PostgreSQL).
* :mod:`sealgraph.audit.runs`: thread ids, run configs, rebuilding the graph of a stored run.
* :mod:`sealgraph.audit.branches`: a thread's original run and the forks replays made of it.
* :mod:`sealgraph.audit.timeline`: render a run's events for people.
* :mod:`sealgraph.audit.replay`: fork a run at a checkpoint with changed config.
* :mod:`sealgraph.audit.stepping`: pause before every node (``--step``).
* :mod:`sealgraph.audit.demo`: the cached index of the example corpus.
* :mod:`sealgraph.audit.paths`: per-user data and cache directories.
"""
