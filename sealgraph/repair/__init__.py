"""The Loop: how SEAL repairs its evidence set, one micro-query per gap.

* :mod:`sealgraph.repair.microqueries`: one targeted query per gap of the specification.
* :mod:`sealgraph.repair.candidates`: the initial hybrid top-k and each micro-query's candidates.
* :mod:`sealgraph.repair.utility`: S(c) = λ1·GapCov + λ2·Corr + λ3·Nov − λ4·Red.
* :mod:`sealgraph.repair.replacement`: fixed-k replacement (ε, dwell, blocklist, do no harm).

These are pure algorithms: they read the ledger's needs and gaps (:mod:`sealgraph.ledger`)
and know nothing of LangGraph. Their values (micro-queries, utility scores, slots and
decisions) are plain types of :mod:`sealgraph.model`.
"""
