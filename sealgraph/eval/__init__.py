"""The evaluation harness behind ``sealgraph eval``.

* :mod:`sealgraph.eval.metrics`: pure metric functions (document recall/precision,
  supporting-sentence recall, gold-span character recall, overlap, HotpotQA EM/F1,
  answer containment).
* :mod:`sealgraph.eval.dataset`, :mod:`sealgraph.eval.corpus_questions`: the two
  question formats (multi-hop QA JSONL; questions about a corpus folder).
* :mod:`sealgraph.eval.split`: the deterministic halves (``--split a|b``).
* :mod:`sealgraph.eval.methods`: the registry of compared methods.
* :mod:`sealgraph.eval.runner`: :func:`run_eval`, the whole run.
* :mod:`sealgraph.eval.report`, :mod:`sealgraph.eval.plot`: outputs.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

__all__ = ["METHODS", "EvalResult", "run_eval"]

if TYPE_CHECKING:  # pragma: no cover
    from sealgraph.eval.methods import METHODS
    from sealgraph.eval.runner import EvalResult, run_eval

_LAZY = {
    "METHODS": "sealgraph.eval.methods",
    "EvalResult": "sealgraph.eval.runner",
    "run_eval": "sealgraph.eval.runner",
}


def __getattr__(name: str) -> Any:
    # Lazy, like the top-level package: importing a submodule (the CLI's --help,
    # the metrics) must not pull in the whole runner.
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'sealgraph.eval' has no attribute {name!r}")
