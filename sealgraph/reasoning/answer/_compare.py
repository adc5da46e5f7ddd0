"""Yes/no and choice questions: verdicts and options read from compared sentences.

Comparisons by dates or numbers compare the values each entity's sentence states;
"the same …" questions compare the values themselves; otherwise a verdict needs a
sentence stating the relation (a negation flips it) and an option wins by stating
more of it.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from sealgraph.packing.scoring import terms
from sealgraph.reasoning.answer._build import build_answer
from sealgraph.reasoning.answer._context import TOKEN, Context, Sentence
from sealgraph.reasoning.answer._kind import in_heads
from sealgraph.reasoning.answer._types import ComposedAnswer
from sealgraph.reasoning.answer._values import (
    asks_now,
    name_candidates,
    nearest,
    relation_positions,
    sentence_values,
    superseded,
)
from sealgraph.text.lexicon import active, stem
from sealgraph.text.names import YEAR_RE, fold, normalize_name

__all__ = ["choice", "value_kind", "yes_no"]


def _negated(text: str) -> bool:
    lex = active()
    toks = [fold(t) for t in TOKEN.findall(text)]
    return any(t in lex.negations or t.endswith(lex.negation_suffixes) for t in toks)


def _entity_sentences(ctx: Context, key: str) -> list[Sentence]:
    return [s for s in ctx.sentences if ctx.names_entity(s, key)]


def _best_for(
    ctx: Context, key: str, extra: frozenset[str] = frozenset(), *, require: bool = True
) -> Sentence | None:
    """Return the sentence about an entity holding most of the question's relation terms.

    ``extra`` terms count a little too; None when no sentence holds any relation term
    and ``require`` is set.
    """
    found = _entity_sentences(ctx, key)
    if not found:
        return None
    best = max(found, key=lambda s: (_covered(ctx, s) + 0.1 * len(extra & s.terms), -s.order))
    if not require:
        return best
    return best if _covered(ctx, best) > 0 or not ctx.relation else None


def _covered(ctx: Context, s: Sentence) -> float:
    """Return a sentence's relation coverage, its title's and heading's words with it.

    An item under "Tidepool Event Stream > Main consumers" states that it consumes
    from Tidepool.
    """
    return ctx.coverage(s.terms | terms(s.title) | terms(s.heading))


def value_kind(question: str) -> str:
    """Return what a comparison compares: ``lifespan``, ``date``, ``number`` or ""."""
    lex = active()
    if lex.lifespan_re.search(question):
        return "lifespan"
    if lex.early_re.search(question) or lex.late_re.search(question):
        return "date"
    if lex.more_re.search(question) or lex.less_re.search(question):
        return "number"
    return ""


def _compared_value(ctx: Context, key: str, vkind: str) -> tuple[float, Sentence] | None:
    """Return the date (as a year) or number the compared entity's best sentence states."""
    best: tuple[tuple[float, int], float, Sentence] | None = None
    for s in _entity_sentences(ctx, key):
        value: float | None = None
        if vkind == "lifespan":
            years = [int(y) for y in YEAR_RE.findall(s.text)[:2]]
            value = float(abs(years[1] - years[0])) if len(years) == 2 else None
        elif vkind == "date":
            m = active().date_re.search(s.text)
            year = YEAR_RE.search(m.group(0)) if m else None
            value = float(year.group(1)) if year else None
        else:
            nums = sentence_values(ctx, s, "number", set())
            value = _number(nums[0][1]) if nums else None
        if value is None:
            continue
        rank = (ctx.coverage(s.terms), -s.order)
        if best is None or rank > best[0]:
            best = (rank, value, s)
    return (best[1], best[2]) if best is not None else None


def _number(value: str) -> float | None:
    m = re.search(r"\d[\d,]*(?:\.\d+)?", value)
    if not m:
        return None
    try:
        return float(m.group(0).replace(",", ""))
    except ValueError:
        return None


def _described_referent(ctx: Context, option: str) -> tuple[str, Sentence] | None:
    """Resolve "the lead of X" to the entity filling the role, and the sentence saying so."""
    q = ctx.needs.question
    i = q.find(option)
    m = active().role_of_re.search(q[:i]) if i >= 0 else None
    if not m:
        return None
    role = stem(fold(m.group(1)))
    now = asks_now(q)
    best: tuple[int, str, Sentence] | None = None
    for s in _entity_sentences(ctx, normalize_name(option)):
        if role not in s.terms:
            continue
        cands = name_candidates(ctx, s, "person", {ctx.canon(normalize_name(option))}, "")
        if now:
            # "The lead of X" is X's lead now: not "its first lead, Y, left in 2019".
            cands = [(p, n) for p, n in cands if not superseded(s.text, p, n)]
        pick = nearest(
            cands, [t.start() for t in TOKEN.finditer(s.text) if stem(fold(t.group(0))) == role]
        )
        if pick and (best is None or s.order < best[2].order):
            best = (pick[0], pick[1], s)
    return (best[1], best[2]) if best else None


def _pick_by_values(
    ctx: Context, names: Sequence[str], vkind: str
) -> tuple[int, list[Sentence]] | None:
    """Index of the option the comparative selects, with the sentences of the values."""
    got = [_compared_value(ctx, normalize_name(n), vkind) for n in names[:2]]
    if any(g is None for g in got):
        return None
    (va, sa), (vb, sb) = got  # type: ignore[misc]
    if va == vb:
        return None
    q = ctx.needs.question
    lex = active()
    if vkind == "date":
        early = 0 if va < vb else 1
        pick = early if lex.early_re.search(q) else 1 - early
    else:
        big = 0 if va > vb else 1
        more = lex.more_re.search(q) or (vkind == "lifespan" and lex.older_re.search(q))
        pick = big if more else 1 - big
    return pick, [sa, sb]


def choice(ctx: Context) -> ComposedAnswer | None:
    """Answer a choice question with the option the comparative or the relation selects.

    Options described by a role ("the lead of X") are first resolved to the entity
    filling it; dates or numbers decide when the question compares them, else the
    option whose sentences state more of the relation. None without two options.
    """
    needs = ctx.needs
    options = list(needs.options) or [e.name for e in needs.entities[:2]]
    if len(options) < 2:
        return None
    options = options[:2]
    referents = [_described_referent(ctx, o) for o in options]
    names = [r[0] if r else o for r, o in zip(referents, options, strict=True)]
    lead = [r[1] for r in referents if r]
    vkind = value_kind(needs.question)
    if vkind:
        got = _pick_by_values(ctx, names, vkind)
        if got:
            pick, sents = got
            return build_answer(ctx, "choice", names[pick], [*lead, *sents], 0.7)
    return _choice_by_relation(ctx, options, names, lead)


def _choice_by_relation(
    ctx: Context, options: Sequence[str], names: Sequence[str], lead: Sequence[Sentence]
) -> ComposedAnswer | None:
    """Pick the option whose sentences state more of the relation (no comparable value).

    The question's other names count a little too ("a giant dog breed"); a tie gives
    no option.
    """
    needs = ctx.needs
    option_keys = {normalize_name(o) for o in options}
    extra = frozenset().union(*(terms(e.name) for e in needs.entities if e.key not in option_keys))
    best = [_best_for(ctx, normalize_name(n), extra) for n in names]
    cover = [ctx.coverage(b.terms) + 0.1 * len(extra & b.terms) if b else -1.0 for b in best]
    sents = [b for b in best if b]
    if cover[0] == cover[1]:
        return build_answer(ctx, "choice", "", [*lead, *sents], 0.0) if sents else None
    pick = 0 if cover[0] > cover[1] else 1
    return build_answer(ctx, "choice", names[pick], [*lead, *sents], 0.3)


def yes_no(ctx: Context) -> ComposedAnswer | None:
    """Answer a yes/no question: yes or no only when the sentences support it.

    "The same …" questions compare the values each entity's sentence states;
    comparisons by dates or numbers compare the values; otherwise each named entity
    needs a sentence stating the relation, and a negated one says no. None when no
    sentence is about the entities.
    """
    needs = ctx.needs
    q = needs.question
    q_negated = _negated(q)
    ents = [e.name for e in needs.entities if e.key not in set(needs.answer_modifiers)]
    keys = [normalize_name(n) for n in ents]
    lex = active()
    if len(ents) >= 2 and lex.same_re.search(q):
        return _yes_no_same(ctx, ents[:2])
    if len(ents) >= 2 and not lex.all_re.search(q):
        got = _yes_no_by_values(ctx, ents[:2], q_negated)
        if got is not None:
            return got
    # Each named entity needs a sentence stating the relation; a negated one says no.
    targets = keys[:2] if lex.all_re.search(q) and len(keys) >= 2 else keys[:1]
    others = frozenset().union(*(terms(n) for n in ents)) if ents else frozenset()
    return _yes_no_stated(ctx, targets, others, q_negated)


def _yes_no_by_values(ctx: Context, ents: Sequence[str], q_negated: bool) -> ComposedAnswer | None:
    """Answer "Is X older than Y?" by the dates or numbers the sentences state."""
    vkind = value_kind(ctx.needs.question)
    if not vkind:
        return None
    got = _pick_by_values(ctx, ents, vkind)
    if not got:
        return None
    pick, sents = got
    verdict = (pick == 0) != q_negated
    return build_answer(ctx, "yes_no", "yes" if verdict else "no", sents, 0.6)


def _yes_no_stated(
    ctx: Context, targets: Sequence[str], others: frozenset[str], q_negated: bool
) -> ComposedAnswer | None:
    """Answer by each target entity's sentence stating the relation (a negation flips it).

    Without such a sentence for every target the answer gives no verdict (None when
    no target has a sentence at all).
    """
    support: list[Sentence] = []
    for key in targets:
        s = _best_for(ctx, key, others)
        if s is None or _covered(ctx, s) < 0.5:
            if s is not None:
                support.append(s)
            return build_answer(ctx, "yes_no", "", support, 0.0) if support else None
        support.append(s)
    if not support:
        return None
    negated = any(_negated(s.text) for s in support)
    return build_answer(ctx, "yes_no", "no" if negated != q_negated else "yes", support, 0.5)


def _yes_no_same(ctx: Context, ents: Sequence[str]) -> ComposedAnswer | None:
    q = ctx.needs.question
    tokens = [fold(t) for t in TOKEN.findall(q)]
    by_year = any(in_heads(t, active().time_heads) for t in tokens)
    values: list[str] = []
    support: list[Sentence] = []
    for name in ents:
        key = normalize_name(name)
        # "The same country": the sentences state the value ("a British band"), not
        # the attribute's name, so the entity's best sentence need not hold it.
        s = _best_for(ctx, key, require=False)
        if s is None:
            return build_answer(ctx, "yes_no", "", support, 0.0) if support else None
        support.append(s)
        if by_year:
            m = YEAR_RE.search(s.text)
            value = m.group(1) if m else ""
        else:
            others = {ctx.canon(normalize_name(n)) for n in ents}
            cands = name_candidates(ctx, s, "entity", others, "")
            got = nearest(cands, relation_positions(ctx, s.text))
            value = ctx.canon(normalize_name(got[1])) if got else ""
        values.append(value)
    if not all(values):
        return build_answer(ctx, "yes_no", "", support, 0.0)
    return build_answer(ctx, "yes_no", "yes" if values[0] == values[1] else "no", support, 0.6)
