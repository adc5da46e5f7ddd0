"""Offline answers composed from the packed context, without a model.

The offline answer is the smallest set of cited sentences of the packed context that
covers the question's hops, one sentence per hop, with the short answer span marked
when the expected answer kind is recognised in the last hop's sentence:

    Dana Whitcombe — Ledgerline is owned by the Payments Platform Team (PPT). [1]
    Dana Whitcombe has led the Payments Platform Team since 2019. [2]

:class:`ComposedAnswer` keeps the parts apart (``short``, the ``support`` sentences
and what is ``missing``); ``answer`` is the readable string: ``short — sentences``
when a short span is marked, the sentences alone when it is not, with document
markup removed (:func:`~sealgraph.text.readable.readable`). What a missing hop or
an open gap leaves unstated is the ``missing`` field, never part of the answer
text. The composer declines (:data:`DECLINED`, with ``missing`` from the open gaps)
only when no sentence of the context answers anything the question asks.

How each question form is answered:

* **yes/no**: yes or no only when a sentence supports it (a negation in the
  supporting sentence flips it); comparisons by dates or numbers ("Is X older than
  Y?") and "the same …" questions compare the values the sentences state. Otherwise
  the answer is the best sentences, without a verdict.
* **choice** ("Which opened first, X or Y?"): the option the comparative selects by
  the dates or numbers of each option's sentence; options described by a role ("the
  lead of X or the lead of Y") are first resolved to the entity filling it.
* **everything else**: a chain of sentences from one that names a question entity,
  each next one linked to the previous by a name they share (the bridge), the last
  one holding a value of the expected kind (:func:`answer_kind`).

The words the composer reads (head nouns of answer kinds, question words,
comparatives, negations, date and amount patterns) are the active lexicon's
(:mod:`sealgraph.text.lexicon`).

The package's private modules: ``_types`` (the value types), ``_kind`` (answer kind,
asked terms, hops), ``_context`` (the context as sentences, their names and aliases),
``_values`` (short-answer candidates in a sentence), ``_chains`` (one sentence per
hop), ``_compare`` (yes/no and choice), ``_build`` (answers from sentences, declining)
and ``_compose`` (:func:`compose_answer`, :func:`extractive_answer`).
"""

from __future__ import annotations

from sealgraph.reasoning.answer._build import DECLINED
from sealgraph.reasoning.answer._chains import FULL_COVER
from sealgraph.reasoning.answer._compose import compose_answer, extractive_answer
from sealgraph.reasoning.answer._kind import answer_head, answer_kind, asked_terms, question_hops
from sealgraph.reasoning.answer._reader import AnswerAids
from sealgraph.reasoning.answer._types import AnswerStep, ComposedAnswer, OfflineAnswer, SpanText

__all__ = [
    "DECLINED",
    "FULL_COVER",
    "AnswerAids",
    "AnswerStep",
    "ComposedAnswer",
    "OfflineAnswer",
    "SpanText",
    "answer_head",
    "answer_kind",
    "asked_terms",
    "compose_answer",
    "extractive_answer",
    "question_hops",
]
