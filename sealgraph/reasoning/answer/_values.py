"""Values in a sentence: the candidate short answers of a kind, and the best one.

Dates, numbers and amounts are read with the active lexicon's patterns; names
(people, organisations, places, entities) are the sentence's names that the question
does not write itself, fitted to the answer kind and to the asked head noun.
"""

from __future__ import annotations

import re

from sealgraph.packing.scoring import terms
from sealgraph.reasoning.answer._context import TOKEN, Context, Sentence
from sealgraph.reasoning.answer._kind import in_heads
from sealgraph.text.lexicon import active, stem
from sealgraph.text.names import fold, normalize_name

__all__ = [
    "NAME_KINDS",
    "VALUED_KINDS",
    "best_value",
    "name_candidates",
    "nearest",
    "relation_positions",
    "sentence_values",
    "short_value",
]

_AGENT_KINDS = ("person", "agent", "organization")
NAME_KINDS = ("person", "agent", "organization", "entity", "place")
VALUED_KINDS = ("date", "number", "amount", *NAME_KINDS)


def relation_positions(ctx: Context, text: str) -> list[int]:
    """Return the offsets of the asked relation's words in ``text``.

    Those of any relation word when the text holds none of the asked ones.
    """
    toks = [(m.start(), stem(fold(m.group(0)))) for m in TOKEN.finditer(text)]
    asked = [p for p, t in toks if t in ctx.asked]
    return asked or [p for p, t in toks if t in ctx.relation]


def nearest(cands: list[tuple[int, str]], rel: list[int]) -> tuple[int, str] | None:
    """Return the candidate nearest a relation word (the first when there is none)."""
    if not cands:
        return None
    if not rel:
        return cands[0]
    return min(cands, key=lambda c: (min(abs(c[0] - r) for r in rel), c[0]))


def name_candidates(
    ctx: Context, s: Sentence, kind: str, exclude: set[str], head: str
) -> list[tuple[int, str]]:
    """Return the names of a sentence that may answer: ``(offset, name)``.

    Not a question entity, not a name the question writes, not in ``exclude`` (the
    bridge) unless it is the asked relation's agent, and placed as the kind needs.
    """
    q_words = ctx.q_terms
    lex = active()
    out: list[tuple[int, str]] = []
    for pos, name in s.names:
        key = ctx.canon(normalize_name(name))
        if not key or key in ctx.anchors:
            continue
        if key in exclude and not _agent_of_asked(ctx, s.text, pos):
            continue  # the bridge, unless it is the asked relation's agent
        name_terms = terms(name)
        if not name_terms or name_terms <= q_words:
            continue
        before = s.text[:pos]
        in_place = lex.place_before_re.search(before) is not None
        if kind in _AGENT_KINDS and in_place and not lex.agent_before_re.search(before):
            continue
        if kind == "place" and not in_place:
            continue
        out.append(_without_opener(s.text, pos, name))
    if head and kind in ("entity", "place", "organization"):
        # "In which office": grow "Lisbon" to the context's "Lisbon Office".
        return [(p, _expand(ctx, n, head)) for p, n in out]
    return out


def _without_opener(text: str, pos: int, name: str) -> tuple[int, str]:
    """Drop a sentence's capitalised first word joined to a name by a lower-case word.

    "Owns the Ledgerline Billing Service." opens with a verb, capitalised by its
    place, not as part of the name.
    """
    words = name.split(" ")
    opens = pos == 0 or text[:pos].rstrip().endswith((".", ":", ";", "!", "?"))
    if not opens or len(words) < 3 or not words[1].islower():
        return pos, name
    rest = " ".join(words[2:])
    return pos + len(words[0]) + len(words[1]) + 2, rest


def _agent_of_asked(ctx: Context, text: str, pos: int) -> bool:
    """Whether the name at ``pos`` is the agent of an asked word: "directed by X"."""
    m = active().agent_by_re.search(text[:pos])
    return bool(m and ctx.asked and stem(fold(m.group(1))) in ctx.asked)


def _fit(name: str, kind: str, head: str) -> float:
    """How well a name fits the answer kind: 1 for a clear fit, less for a doubtful one.

    A name holding the asked head noun ("Lisbon Office" for "which office") or an
    organisation noun ("Reliability Guild" for "which group") fits an organisation; a
    name of two words or more without one fits a person; an acronym fits either, weakly.
    """
    words = fold(name).split()
    acronym = len(words) == 1 and name.isupper()
    org = any(in_heads(w, active().organization_heads) for w in words)
    if head and any(w.removesuffix("s") == head.removesuffix("s") for w in words):
        return 1.0
    if kind == "person":
        return 1.0 if len(words) >= 2 and not org else 0.3 if acronym or org else 0.6
    if kind == "organization":
        return 1.0 if org else 0.7 if len(words) >= 2 else 0.5 if acronym else 0.4
    if kind == "agent":
        return 1.0 if org or len(words) >= 2 else 0.6
    return 0.6 if head else 1.0


def _in_heads_name(name: str, head: str) -> bool:
    return any(w.removesuffix("s") == head.removesuffix("s") for w in fold(name).split())


def _expand(ctx: Context, name: str, head: str) -> str:
    """Grow "Lisbon" to "Lisbon Office" when the context names that and it holds the head."""
    key = normalize_name(name)
    if _in_heads_name(name, head):
        return name
    for title in ctx.titles.values():
        tkey = normalize_name(title)
        parts = tkey.split()
        if key and parts[: len(key.split())] == key.split() and _in_heads_name(tkey, head):
            return re.sub(r"\s*\([^)]*\)\s*$", "", title)
    return name


def sentence_values(
    ctx: Context, s: Sentence, kind: str, exclude: set[str], head: str = ""
) -> list:
    """Candidate short answers of ``kind`` in a sentence, as ``(offset, text)``."""
    text = s.text
    lex = active()
    if kind == "date":
        return [(m.start(), m.group(0)) for m in lex.date_re.finditer(text)]
    if kind in ("number", "amount"):
        dates = [(m.start(), m.end()) for m in lex.date_re.finditer(text)]
        if kind == "amount":
            amounts = [(m.start(), m.group(0).strip()) for m in lex.amount_re.finditer(text)]
            if amounts:
                return amounts
        out = []
        for m in lex.number_re.finditer(text):
            if any(a <= m.start() < b for a, b in dates):
                continue
            value = m.group(0)
            unit = TOKEN.match(text, m.end() + 1) if text[m.end() : m.end() + 1] == " " else None
            if unit and stem(fold(unit.group(0))) in ctx.q_terms:
                value = f"{value} {unit.group(0)}"
            out.append((m.start(), value))
        return out
    if kind in NAME_KINDS:
        return name_candidates(ctx, s, kind, exclude, head)
    return []


def best_value(
    ctx: Context, s: Sentence, kind: str, exclude: set[str], head: str
) -> tuple[float, str] | None:
    """Return the sentence's best short answer of ``kind`` and its fit.

    The best-fitting value, then the one nearest the question's relation words, then
    the first.
    """
    cands = sentence_values(ctx, s, kind, exclude, head)
    if not cands:
        return None
    rel = relation_positions(ctx, s.text)
    now = kind in NAME_KINDS and asks_now(ctx.needs.question)

    def rank(c: tuple[int, str]) -> tuple[float, bool, int, int]:
        fit = _fit(c[1], kind, head) if kind in NAME_KINDS else 1.0
        distance = min((abs(c[0] - r) for r in rel), default=0)
        current = not (now and superseded(s.text, c[0], c[1]))
        return (fit, current, -distance, -c[0])

    best = max(cands, key=rank)
    text = best[1].strip(" ,.;:")
    if kind in NAME_KINDS:
        # An acronym the context spells out is answered by its long form.
        text = ctx.long_form.get(normalize_name(text), text)
    return rank(best)[0], _without_article(text)


_WINDOW_WORDS = 3
"""Words either side of a name read for a sign that its holder is a past one."""


def asks_now(question: str) -> bool:
    """Whether a question asks who holds something now: none of its words is a past one."""
    return not ({fold(m.group(0)) for m in TOKEN.finditer(question)} & active().past_question_words)


def superseded(text: str, pos: int, name: str) -> bool:
    """Whether the name at ``pos`` is marked as a past holder in its sentence.

    A former-word among the few words before it ("its *first* lead, X") or a
    departure verb among the few after it ("X *left* Corvane in 2019") marks it;
    words of the lexicon's :attr:`~sealgraph.text.lexicon.Lexicon.former_words` and
    :attr:`~sealgraph.text.lexicon.Lexicon.departure_words`.
    """
    lex = active()
    before = [fold(m.group(0)) for m in TOKEN.finditer(text[:pos])][-_WINDOW_WORDS:]
    after = [fold(m.group(0)) for m in TOKEN.finditer(text, pos + len(name))][:_WINDOW_WORDS]
    return bool(set(before) & lex.former_words or set(after) & lex.departure_words)


def _without_article(text: str) -> str:
    """Drop a capitalised leading article before a capitalised word ("The Harbour Trust")."""
    m = active().leading_article_re.match(text)
    if m is None or not "A" <= text[m.end() : m.end() + 1] <= "Z":
        return text
    article = m.group(0).rstrip()
    return text[m.end() :] if article == article.capitalize() else text


def short_value(ctx: Context, s: Sentence, kind: str, exclude: set[str], head: str) -> str:
    """Return the sentence's best short answer of ``kind`` ("" when none)."""
    got = best_value(ctx, s, kind, exclude, head)
    return got[1] if got else ""
