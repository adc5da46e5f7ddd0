"""The entity ledger and the gap specification it yields.

* :mod:`sealgraph.ledger.needs`: N(q), what the question needs (entities, relations,
  hops, answer type), read from its form and the lexicon.
* :mod:`sealgraph.ledger.gazetteer`: the corpus's names (titles, headings, aliases).
* :mod:`sealgraph.ledger.knowledge`: corpus tables the offline reasoner reads (document
  frequencies, names, years).
* :mod:`sealgraph.ledger.extract`: entities, relations and qualifiers of passages.
* :mod:`sealgraph.ledger.ledger`: U_t, the entity ledger built from them.
* :mod:`sealgraph.ledger.gaps`: the sufficiency gate's typed gap specification.

The values these exchange with the rest of the graph (needs, need items, gaps, ledger
facts) are plain types of :mod:`sealgraph.model`, importable from the modules above.
"""
