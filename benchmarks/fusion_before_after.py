"""Run ``sealgraph eval`` with the candidates' fusion as it was before 7e8bfee (--old) or as now.

Before 7e8bfee, repair.candidates.rank_doc_chunks fused its lexical and dense orders with
0-based ranks and its own constant 60: 1/(60 + rank0) = 1/(59 + rank1), i.e. the one fusion
with rrf_k = 59 at the default equal weights. --old patches exactly that; the rest of the
arguments are sealgraph eval's.
"""

import sys

import sealgraph.repair.candidates as cand

if sys.argv[1] == "--old":
    sys.argv.pop(1)
    new = cand.rank_doc_chunks

    def old(index, query, chunk_ids, retrieval=None):
        retrieval = retrieval or cand.RetrievalConfig()
        assert retrieval.lexical_weight == retrieval.dense_weight == 1.0
        return new(
            index, query, chunk_ids, retrieval.model_copy(update={"rrf_k": retrieval.rrf_k - 1})
        )

    cand.rank_doc_chunks = old
from sealgraph.cli import main

sys.exit(main(["eval", *sys.argv[1:]]))
