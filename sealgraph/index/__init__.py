"""The on-disk index: SQLite docstore, lexical BM25, dense FAISS, manifest.

Public entry points: :func:`build_index`, :func:`load_index` and the
:class:`Index` they return.
"""
