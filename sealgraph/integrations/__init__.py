"""sealgraph from other frameworks (outbound): :mod:`sealgraph.integrations.langchain`."""
