"""Offline answers read from the packed context, without a model.

The context is read as units (:mod:`._units`: sentences, list items, table rows,
code blocks, each under its heading). A **reader** (:mod:`._reader`) scores every
unit for each part the question asks (:mod:`._parts`): the part's words weighted by
their rarity in the corpus, the asked relation, the asked head noun, the similarity
under the index's embedder (:class:`AnswerAids`), and the fit of a value of the asked
kind (:mod:`._typed`: a version, a duration, a number, a date, code, a name, a stated
default) or of structure (a code block for "how do I"). The best unit answers, led by
its value as the short answer:

    5 — Default: 5 [2]

A question asked in one sentence whose answer is one hop away from what it names
keeps the chain of sentences linked by a name they share (:mod:`._hops`) unless the
reader's unit is clearly better:

    Dana Whitcombe — Ledgerline is owned by the Payments Platform Team (PPT). [1]
    Dana Whitcombe has led the Payments Platform Team since 2019. [2]

:class:`ComposedAnswer` keeps the parts apart (``short``, the ``support`` units and
what is ``missing``), and how it was chosen (:class:`AnswerStep`: each part's
candidate units with their scores and features, and why one won); ``answer`` is the
readable string: ``short — units`` when a short span is marked, the units alone when
it is not, with document markup removed (:func:`~sealgraph.text.readable.readable`).
What the context does not state is the ``missing`` field, never part of the answer
text. The composer declines (:data:`DECLINED`) when no unit answers anything the
question asks, or when a part is stated together by no unit (:mod:`._compose`).

How each question form is answered:

* **yes/no**: yes or no only when a sentence supports it (a negation in the
  supporting sentence flips it); comparisons by dates or numbers ("Is X older than
  Y?") and "the same …" questions compare the values the sentences state; else the
  reader's unit that states what is asked decides. Otherwise no verdict.
* **choice** ("Which opened first, X or Y?"): the option the comparative selects by
  the dates or numbers of each option's sentence; options described by a role ("the
  lead of X or the lead of Y") are first resolved to the entity filling it now.
* **several parts** ("Which X …, and how do I …?"): each part by its own unit.
* **everything else**: the reader's unit, or the chain (see above).

The words the composer reads (head nouns of answer kinds, question words,
comparatives, negations, date and amount patterns, answer-type and structure cues,
relation synonyms) are the active lexicon's (:mod:`sealgraph.text.lexicon`).

The package's private modules: ``_types`` (the value types), ``_kind`` (answer kind,
asked terms, hops), ``_units`` (the units of a span), ``_context`` (the context as
units, their names and aliases), ``_parts`` (what a question asks), ``_reader`` (units
scored for a part), ``_typed`` (values of the asked kind in a unit), ``_pick``
(answers from readings), ``_values`` (short-answer candidates in a sentence),
``_chains`` and ``_hops`` (one sentence per hop), ``_compare`` (yes/no and choice),
``_rows`` (table rows), ``_build`` (answers from sentences, declining), ``_step`` (the
answer step for the trace) and ``_compose`` (:func:`compose_answer`,
:func:`extractive_answer`).
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
