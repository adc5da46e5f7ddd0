"""Moved to :mod:`sealgraph.integrations.langchain` (and documents in: :mod:`sealgraph.ingest.from_langchain`)."""

from sealgraph._moved import alias

alias(__name__, "sealgraph.integrations.langchain")
