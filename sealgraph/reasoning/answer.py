"""Offline answers composed from the packed context, without a model.

The offline answer is the smallest set of cited sentences of the packed context that
covers the question's hops, one sentence per hop, with the short answer span marked
when the expected answer kind is recognised in the last hop's sentence:

    Dana Whitcombe — Ledgerline is owned by the Payments Platform Team (PPT). [1]
    Dana Whitcombe has led the Payments Platform Team since 2019. [2]

:class:`ComposedAnswer` keeps the parts apart (``short``, the ``support`` sentences
and what is ``missing``); ``answer`` is the readable string: ``short — sentences``
when a short span is marked, the sentences alone when it is not, followed by "Not
found in the context: …" when a hop is still missing. The composer declines
("Insufficient evidence: …", from the open gaps) only when no sentence of the
context answers anything the question asks.

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
"""

from __future__ import annotations

import dataclasses
import math
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Protocol

from sealgraph.ledger.needs import QuestionNeeds
from sealgraph.packing.scoring import (
    boilerplate_reason,
    name_spans,
    phrase,
    terms,
)
from sealgraph.text.chunking import split_sentences
from sealgraph.text.lexicon import WORD_RE, Lexicon, active, stem
from sealgraph.text.names import YEAR_RE, fold, normalize_name

__all__ = [
    "ComposedAnswer",
    "OfflineAnswer",
    "SpanText",
    "answer_kind",
    "asked_terms",
    "compose_answer",
    "extractive_answer",
    "question_hops",
]

FULL_COVER = 0.75
"""Share of the question's relation-term weight above which one sentence is taken to
state every hop of a multi-hop question (its hops are written in one sentence)."""

_AGENT_KINDS = ("person", "agent", "organization")
_NAME_KINDS = ("person", "agent", "organization", "entity", "place")
_VALUED_KINDS = ("date", "number", "amount", *_NAME_KINDS)

_TOKEN = WORD_RE  # the one tokenizer's pattern, on unfolded text
_QUESTION_TOKEN = re.compile(r"[\w'’-]+|[^\w\s]")
_LIST_MARK = re.compile(r"^\s*(?:[-*+•]|\d{1,3}[.)])\s+")


class _GapLike(Protocol):
    reason: str


# ---------------------------------------------------------------------------
# Public value types.


@dataclass(frozen=True, slots=True)
class SpanText:
    """A packed span as the answerer sees it."""

    n: int
    """Citation number."""
    doc_id: str
    """Document the span comes from."""
    title: str
    """Document title."""
    text: str
    """Span text."""


@dataclass(frozen=True, slots=True)
class OfflineAnswer:
    """A short extractive answer with the spans it was read from."""

    answer: str
    """The short answer ("" when none is recognised)."""
    cited: tuple[int, ...]
    """Citation numbers of the spans it was read from."""
    confidence: float
    """0..1 heuristic confidence."""


@dataclass(frozen=True, slots=True)
class ComposedAnswer:
    """An offline answer: the short span, its supporting sentences and what is missing."""

    answer: str
    """The readable answer: ``short — sentence [n] …``, the sentences alone when no short
    span is marked, or "Insufficient evidence: …" when the composer declined."""
    short: str
    """The short answer span ("yes"/"no", an option, a name, a date…) or "" when the
    answer kind is not recognised with confidence."""
    support: tuple[tuple[int, str], ...]
    """``(citation number, sentence)`` of each supporting sentence, in hop order."""
    cited: tuple[int, ...]
    """Citation numbers the answer relies on (sorted)."""
    insufficient: bool = False
    """True only when the context holds nothing that answers (the answer declines)."""
    missing: str = ""
    """What the context does not state (from the open gaps), "" when nothing is missing."""
    kind: str = "other"
    """The expected answer kind (see :func:`answer_kind`)."""
    confidence: float = 0.0
    """0..1 heuristic confidence of the short answer."""


# ---------------------------------------------------------------------------
# Answer kind.


def question_hops(needs: QuestionNeeds) -> int:
    """Hops the question asks for: ``needs.hops`` when known, else read from its structure."""
    default = {"bridge": 2, "multi_step": 3}.get(needs.structure, 1)
    hops = getattr(needs, "hops", default)
    try:
        return max(1, min(4, int(hops)))
    except (TypeError, ValueError):
        return default


def _asking_word(tokens: list[str]) -> int | None:
    """Index of the wh-word that asks the question (not one opening a relative clause)."""
    lex = active()
    wh, preps = lex.wh_words, lex.question_prepositions
    words = [i for i, t in enumerate(tokens) if t[:1].isalnum()]
    if not words:
        return None
    first = words[0]
    if tokens[first] in wh:
        return first
    if tokens[first] in preps and len(words) > 1 and tokens[words[1]] in wh:
        return words[1]
    # Asked in place, at the end: "… named after who?", "… in what city?".
    for i in words[-4:]:
        if tokens[i] in wh:
            return i
    for k, i in enumerate(words[1:], start=1):
        if tokens[i] in wh and (tokens[words[k - 1]] in preps or tokens[i - 1] in (",", ";", ":")):
            return i
    return None


def _head_noun(tokens: list[str], at: int) -> str:
    """Head of the noun phrase after "which"/"what": its last word before a function word."""
    lex = active()
    head = ""
    j = at + 1
    while j < len(tokens) and j - at <= 5:
        t = tokens[j]
        if not t[:1].isalnum() or t in lex.stop_words or t in lex.wh_words:
            break
        nxt = tokens[j + 1] if j + 1 < len(tokens) else ""
        # A verb ends the phrase: "which actor starred", "which company owns the".
        if head and (
            (t.endswith("ed") and len(t) > 4)
            or (t.endswith("s") and nxt in lex.described_determiners)
        ):
            break
        head = t
        j += 1
    return head


def _copula_head(tokens: list[str], at: int) -> str:
    """Head of the noun phrase after "what is the": "What was the operating *income* of X"."""
    lex = active()
    j = at + 1
    if j >= len(tokens) or tokens[j] not in lex.copulas or tokens[j] in lex.possessive_suffixes:
        return ""
    j += 1
    if j >= len(tokens) or tokens[j] not in lex.articles:
        return ""
    head = ""
    j += 1
    while j < len(tokens) and tokens[j][:1].isalnum() and tokens[j] not in lex.stop_words:
        head = tokens[j]
        j += 1
    return head


def _in_heads(word: str, heads: frozenset[str]) -> bool:
    return word in heads or word.removesuffix("s") in heads or word.removesuffix("es") in heads


def answer_head(question: str) -> str:
    """Return the head noun of the asked "which/what <head>" phrase ("" when none)."""
    tokens = [fold(t) for t in _QUESTION_TOKEN.findall(question)]
    at = _asking_word(tokens)
    if at is None or tokens[at] not in active().selective_wh:
        return ""
    return _head_noun(tokens, at)


def _all_heads(lex: Lexicon) -> tuple[frozenset[str], ...]:
    return (
        lex.person_heads,
        lex.organization_heads,
        lex.place_heads,
        lex.time_heads,
        lex.quantity_heads,
        lex.amount_heads,
    )


def asked_terms(question: str) -> frozenset[str]:
    """Stemmed words of the relation the question asks about directly.

    The words right after the asking wh-word, up to the first described or named
    entity: "Who *leads* the team that …", "How many *engineers* does …", "Which
    group is *chaired* by …". After a copula the asked noun phrase itself ("Who is
    the *site lead* of …"). The last hop's sentence must state them: a chain that
    ends on a sentence about the bridge alone has not reached the answer.
    """
    lex = active()
    raw = _QUESTION_TOKEN.findall(question)
    tokens = [fold(t) for t in raw]
    at = _asking_word(tokens)
    if at is None:
        return frozenset()
    j = at + 1
    out: list[str] = []
    head = _head_noun(tokens, at) if tokens[at] in lex.selective_wh else ""
    if j < len(tokens) and tokens[j] in lex.asking_auxiliaries:
        j += 1
        if j < len(tokens) and tokens[j] in lex.described_determiners:
            j += 1  # "Who is the site lead of": the asked phrase follows the copula
    all_heads = _all_heads(lex)
    while j < len(tokens):
        t, r = tokens[j], raw[j]
        if not t[:1].isalnum() or t in lex.described_determiners or t in lex.question_prepositions:
            break
        if r[:1].isupper() or t in lex.wh_words or t in lex.asked_phrase_breaks:
            break
        if (
            t != head
            and t not in lex.stop_words
            and t not in lex.asking_auxiliaries
            and t not in lex.how_quantity_words
            and not any(_in_heads(t, heads) for heads in all_heads)
        ):
            out.extend(terms(t))
        j += 1
    return frozenset(out)


def answer_kind(needs: QuestionNeeds) -> str:
    """Return the kind of answer the question expects, read from its asking phrase.

    One of ``yes_no``, ``choice``, ``date``, ``number``, ``amount``, ``person``,
    ``agent`` (a person or an organisation: what "who" asks; never a place),
    ``organization``, ``place``, ``entity`` (a named thing: "which office",
    "what series") or ``other`` (a description: "what does X return", "how does X
    work"). The asking wh-word is the question's first word (after a preposition:
    "In which office"), or one asked in place at its end ("named after who?"); a
    wh-word that opens a relative clause ("the office where …") asks nothing.
    """
    if needs.answer_type == "yes_no":
        return "yes_no"
    if needs.answer_type == "choice" and len(needs.options) >= 2:
        return "choice"
    tokens = [fold(t) for t in _QUESTION_TOKEN.findall(needs.question)]
    at = _asking_word(tokens)
    if at is None:
        return {
            "person": "agent",
            "place": "place",
            "date": "date",
            "number": "number",
            "choice": "entity",
        }.get(needs.answer_type, "other")
    lex = active()
    wh = tokens[at]
    if wh in lex.wh_kinds:
        return lex.wh_kinds[wh]
    if wh in lex.how_words:
        nxt = tokens[at + 1] if at + 1 < len(tokens) else ""
        return lex.how_kinds.get(nxt, "other")
    if wh not in lex.selective_wh:
        return "other"
    head = _head_noun(tokens, at) or _copula_head(tokens, at)
    if not head:
        return "other"
    if not _head_noun(tokens, at):
        # "What was the operating income of X?": a value when the noun names one.
        for heads, kind in (
            (lex.time_heads, "date"),
            (lex.amount_heads, "amount"),
            (lex.quantity_heads, "number"),
        ):
            if _in_heads(head, heads):
                return kind
        return "other"
    for heads, kind in (
        (lex.time_heads, "date"),
        (lex.amount_heads, "amount"),
        (lex.quantity_heads, "number"),
        (lex.place_heads, "place"),
        (lex.person_heads, "person"),
        (lex.organization_heads, "organization"),
    ):
        if _in_heads(head, heads):
            return kind
    return "entity"


# ---------------------------------------------------------------------------
# The context as sentences.


@dataclass(slots=True)
class _Sentence:
    n: int
    doc_id: str
    title: str
    text: str
    order: int
    terms: frozenset[str]
    phrase: str
    names: list[tuple[int, str]] = field(default_factory=list)
    mentions: set[str] = field(default_factory=set)


def _clean(text: str) -> str:
    return " ".join(_LIST_MARK.sub("", text).split())


def _sentences(spans: Sequence[SpanText]) -> list[_Sentence]:
    out: list[_Sentence] = []
    for s in spans:
        for a, b in split_sentences(s.text):
            raw = s.text[a:b].strip()
            if not raw or raw.startswith("#"):
                continue
            if boilerplate_reason(raw) in ("front matter", "links", "pointer"):
                continue
            text = _clean(raw)
            if not text:
                continue
            out.append(_Sentence(s.n, s.doc_id, s.title, text, len(out), terms(text), phrase(text)))
    return out


class _Context:
    """The packed context read as sentences, with the names they mention."""

    def __init__(self, needs: QuestionNeeds, spans: Sequence[SpanText]) -> None:
        self.needs = needs
        self.sentences = _sentences(spans)
        self.titles = {s.doc_id: s.title for s in spans}
        self.alias: dict[str, str] = {}
        self.long_form: dict[str, str] = {}
        self._read_names(spans)
        self.anchors, self.anchor_docs = self._anchors()
        self.q_terms = terms(needs.question)
        self.relation = terms(" ".join(needs.relation_terms)) or frozenset()
        self.asked = asked_terms(needs.question) & (self.relation | self.q_terms)
        self.q_months, self.q_years = _date_parts(_without_entities(needs))

        n = max(1, len(self.sentences))
        df: dict[str, int] = {}
        for s in self.sentences:
            for t in s.terms:
                df[t] = df.get(t, 0) + 1
        # A relation term no sentence holds weighs most: it is what the context lacks.
        self.weight = {
            t: math.log(1.0 + n / df[t]) if t in df else math.log(1.0 + n) for t in self.relation
        }
        self.total = sum(self.weight.values())

    def canon(self, key: str) -> str:
        seen = set()
        while key in self.alias and key not in seen:
            seen.add(key)
            key = self.alias[key]
        return key

    def _read_names(self, spans: Sequence[SpanText]) -> None:
        """Find every sentence's names, the context's aliases, and what each sentence mentions."""
        known: set[str] = set()
        lower: set[str] = set()
        for title in self.titles.values():
            known.update(fold(w) for w in normalize_name(title).split()[:1])
        for s in self.sentences:
            for _, name in name_spans(s.text):
                known.update(fold(w) for w in name.split())
            lower.update(w for w in _TOKEN.findall(s.text) if w.islower())
        openers = frozenset(known - active().stop_words)
        common = frozenset(lower)
        title_keys = {normalize_name(t) for t in self.titles.values() if normalize_name(t)}
        for s in self.sentences:
            s.names = name_spans(s.text, known_openers=openers, common_words=common)
        for text in [*self.titles.values(), *(s.text for s in spans)]:
            self._declared_aliases(text)
        name_keys = {normalize_name(n) for s in self.sentences for _, n in s.names}
        self._short_names(title_keys | name_keys, title_keys, known, lower)
        # Question entities linked to a document of the context are that document.
        for e in self.needs.entities:
            for d in e.targets:
                if d in self.titles:
                    tkey = normalize_name(self.titles[d])
                    if tkey and tkey != e.key:
                        self.alias.setdefault(e.key, tkey)
                    break
        phrases = {k: phrase(k) for k in {*self.alias, *self.alias.values(), *title_keys}}
        for s in self.sentences:
            found = {self.canon(normalize_name(name)) for _, name in s.names}
            found |= {self.canon(k) for k, p in phrases.items() if p in s.phrase}
            s.mentions = {k for k in found if k}

    def _declared_aliases(self, text: str) -> None:
        """Read "Payments Platform Team (PPT)": PPT is an alias of the long name."""
        for m in active().alias_declaration_re.finditer(text):
            long, short = normalize_name(m.group(1)), normalize_name(m.group(2))
            if long and short and long != short:
                self.alias.setdefault(short, long)
                self.long_form.setdefault(short, " ".join(m.group(1).split()))

    def _short_names(
        self, keys: set[str], title_keys: set[str], known: set[str], lower: set[str]
    ) -> None:
        """Take a name's distinctive first word, written alone, as its short name.

        "Ledgerline" for "Ledgerline Billing Service", when only that name starts with it
        and the context writes the word as a name, never in lower case. A name with a
        function word or a number ("X Outage of March 2025") names an event, not a
        thing called X.
        """
        firsts: dict[str, list[str]] = {}
        stop = active().stop_words
        for key in sorted(keys):
            parts = key.split()
            if (
                len(parts) >= 2
                and len(parts[0]) >= 4
                and not any(p in stop or p[:1].isdigit() for p in parts)
            ):
                firsts.setdefault(parts[0], []).append(key)
        for first, found in firsts.items():
            longest = max(found, key=len)
            if (
                all(longest.startswith(k) for k in found)
                and first not in title_keys
                and first in known
                and first not in lower
            ):
                self.alias.setdefault(first, longest)

    def _anchors(self) -> tuple[set[str], set[str]]:
        modifiers = set(getattr(self.needs, "answer_modifiers", ()))
        keys: set[str] = set()
        docs: set[str] = set()
        for e in self.needs.entities:
            if e.key in modifiers:
                continue
            keys.add(self.canon(e.key))
            docs.update(d for d in e.targets if d in self.titles)
        return keys, docs

    # -- sentence helpers -------------------------------------------------------------

    def names_entity(self, s: _Sentence, key: str) -> bool:
        """Whether the sentence names the entity ``key`` (or is in its document)."""
        key = self.canon(key)
        return key in s.mentions or self.canon(normalize_name(s.title)) == key

    def anchored(self, s: _Sentence) -> bool:
        return bool(s.mentions & self.anchors) or s.doc_id in self.anchor_docs

    def coverage(self, covered: frozenset[str] | set[str]) -> float:
        if not self.total:
            return 0.0
        return sum(self.weight[t] for t in self.relation & covered) / self.total

    def links(self, a: _Sentence, b: _Sentence) -> set[str]:
        """Names that link sentence ``a`` to the next hop ``b`` (question entities aside)."""
        shared = (a.mentions & b.mentions) - self.anchors
        tkey = self.canon(normalize_name(b.title))
        if tkey in a.mentions and tkey not in self.anchors and a.doc_id != b.doc_id:
            shared.add(tkey)
        return shared


# ---------------------------------------------------------------------------
# Values in a sentence.


def _relation_positions(ctx: _Context, text: str) -> list[int]:
    """Return the offsets of the asked relation's words in ``text``.

    Those of any relation word when the text holds none of the asked ones.
    """
    toks = [(m.start(), stem(fold(m.group(0)))) for m in _TOKEN.finditer(text)]
    asked = [p for p, t in toks if t in ctx.asked]
    return asked or [p for p, t in toks if t in ctx.relation]


def _nearest(cands: list[tuple[int, str]], rel: list[int]) -> tuple[int, str] | None:
    if not cands:
        return None
    if not rel:
        return cands[0]
    return min(cands, key=lambda c: (min(abs(c[0] - r) for r in rel), c[0]))


def _name_candidates(
    ctx: _Context, s: _Sentence, kind: str, exclude: set[str], head: str
) -> list[tuple[int, str]]:
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
        out.append((pos, name))
    if head and kind in ("entity", "place", "organization"):
        # "In which office": grow "Lisbon" to the context's "Lisbon Office".
        return [(p, _expand(ctx, n, head)) for p, n in out]
    return out


def _agent_of_asked(ctx: _Context, text: str, pos: int) -> bool:
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
    org = any(_in_heads(w, active().organization_heads) for w in words)
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


def _expand(ctx: _Context, name: str, head: str) -> str:
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


def _values(ctx: _Context, s: _Sentence, kind: str, exclude: set[str], head: str = "") -> list:
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
            unit = _TOKEN.match(text, m.end() + 1) if text[m.end() : m.end() + 1] == " " else None
            if unit and stem(fold(unit.group(0))) in ctx.q_terms:
                value = f"{value} {unit.group(0)}"
            out.append((m.start(), value))
        return out
    if kind in _NAME_KINDS:
        return _name_candidates(ctx, s, kind, exclude, head)
    return []


def _best_value(
    ctx: _Context, s: _Sentence, kind: str, exclude: set[str], head: str
) -> tuple[float, str] | None:
    """Return the sentence's best short answer of ``kind`` and its fit.

    The best-fitting value, then the one nearest the question's relation words, then
    the first.
    """
    cands = _values(ctx, s, kind, exclude, head)
    if not cands:
        return None
    rel = _relation_positions(ctx, s.text)

    def rank(c: tuple[int, str]) -> tuple[float, int, int]:
        fit = _fit(c[1], kind, head) if kind in _NAME_KINDS else 1.0
        distance = min((abs(c[0] - r) for r in rel), default=0)
        return (fit, -distance, -c[0])

    best = max(cands, key=rank)
    text = best[1].strip(" ,.;:")
    if kind in _NAME_KINDS:
        # An acronym the context spells out is answered by its long form.
        text = ctx.long_form.get(normalize_name(text), text)
    return rank(best)[0], _without_article(text)


def _without_article(text: str) -> str:
    """Drop a capitalised leading article before a capitalised word ("The Harbour Trust")."""
    m = active().leading_article_re.match(text)
    if m is None or not "A" <= text[m.end() : m.end() + 1] <= "Z":
        return text
    article = m.group(0).rstrip()
    return text[m.end() :] if article == article.capitalize() else text


def _short(ctx: _Context, s: _Sentence, kind: str, exclude: set[str], head: str) -> str:
    got = _best_value(ctx, s, kind, exclude, head)
    return got[1] if got else ""


# ---------------------------------------------------------------------------
# Chains of sentences (one per hop).


@dataclass(frozen=True, slots=True)
class _Chain:
    sentences: tuple[_Sentence, ...]
    links: frozenset[str]
    covered: frozenset[str]


def _chains(ctx: _Context, hops: int, beam: int = 12) -> list[_Chain]:
    sents = ctx.sentences
    # Every sentence may open a chain (the entity the question names may be written
    # differently); anchored ones score higher (see _chain_score).
    layer = [_Chain((s,), frozenset(), s.terms) for s in sents]
    chains = list(layer)
    layer.sort(
        key=lambda c: (
            -(ctx.coverage(c.covered) + (0.5 if ctx.anchored(c.sentences[0]) else 0.0)),
            c.sentences[0].order,
        )
    )
    layer = layer[: beam * 2]
    # One hop more than the question's form says: a hop count read from wording can
    # be short by one ("the stipend an engineer on PPT receives").
    for _ in range(1, max(hops, 2)):
        grown: list[_Chain] = []
        for ch in layer:
            last = ch.sentences[-1]
            for s in sents:
                # A hop moves on: the next sentence is not about a question entity.
                if s in ch.sentences or s.text == last.text or ctx.anchored(s):
                    continue
                links = ctx.links(last, s)
                if links:
                    grown.append(_Chain((*ch.sentences, s), ch.links | links, ch.covered | s.terms))
        grown.sort(key=lambda c: (-ctx.coverage(c.covered), [x.order for x in c.sentences]))
        layer = grown[:beam]
        chains.extend(layer)
    return chains


def _reaches(ctx: _Context, ch: _Chain, hops: int) -> bool:
    """Whether a chain reaches the answer.

    It needs one sentence per hop (two at least for a multi-hop question) or one
    sentence stating (nearly) every relation asked; a last sentence that states the
    asked relation ("leads" in "Who leads the team …", "cash flow" in "What was the
    cash flow of X?"); no sentence dated otherwise than the question ("in August 2021"
    for "in March 2021"); and some relation word at all.
    """
    n = len(ch.sentences)
    last = ch.sentences[-1]
    if ctx.relation and not ctx.relation & ch.covered:
        return False
    if n < min(hops, 2) and ctx.coverage(ch.covered) < FULL_COVER:
        return False
    if ctx.asked and not ctx.asked & last.terms:
        return False
    return not any(_date_conflict(ctx, s.text) for s in ch.sentences)


def _date_parts(text: str) -> tuple[frozenset[str], frozenset[str]]:
    """Month names and years a text states."""
    months = frozenset(
        fold(m.group(0)) for m in active().month_re.finditer(text) if m.group(0)[:1].isupper()
    )
    return months, frozenset(YEAR_RE.findall(text))


def _date_conflict(ctx: _Context, text: str) -> bool:
    """Tell whether a sentence is dated otherwise than the question.

    Its months (or years) are all other than the ones the question states.
    """
    months, years = _date_parts(text)
    if ctx.q_months and months and not ctx.q_months & months:
        return True
    return bool(ctx.q_years and years and not ctx.q_years & years)


def _without_entities(needs: QuestionNeeds) -> str:
    """Return the question with its entity names blanked ("Outage of March 2025")."""
    q = needs.question
    for e in needs.entities:
        q = q.replace(e.name, " ")
    return q


def _chain_score(ctx: _Context, ch: _Chain, kind: str, hops: int, head: str) -> float:
    last = ch.sentences[-1]
    score = 2.0 * ctx.coverage(ch.covered)
    if kind in _VALUED_KINDS and _reaches(ctx, ch, hops):
        got = _best_value(ctx, last, kind, set(ch.links), head)
        score += 1.5 * got[0] if got else 0.0
    if ctx.relation & last.terms:
        score += 0.3
    if ctx.asked and ctx.asked & last.terms:
        score += 0.5
    if ctx.anchored(ch.sentences[0]):
        score += 0.5
    # A hop that states none of the question's relation words it still lacks adds
    # nothing: "X is the IC" after "the IC joined late" only repeats it.
    covered: frozenset[str] = ch.sentences[0].terms & ctx.relation
    for s in ch.sentences[1:]:
        new = (s.terms & ctx.relation) - covered
        if not new:
            score -= 0.3
        covered |= new
    return score - 0.4 * abs(hops - len(ch.sentences))


def _best_chain(ctx: _Context, kind: str, hops: int, head: str) -> _Chain | None:
    chains = _chains(ctx, hops)
    if not chains:
        return None
    return max(
        chains,
        key=lambda c: (
            round(_chain_score(ctx, c, kind, hops, head), 9),
            -sum(s.order for s in c.sentences),
        ),
    )


# ---------------------------------------------------------------------------
# Yes/no and choice.


def _negated(text: str) -> bool:
    lex = active()
    toks = [fold(t) for t in _TOKEN.findall(text)]
    return any(t in lex.negations or t.endswith(lex.negation_suffixes) for t in toks)


def _entity_sentences(ctx: _Context, key: str) -> list[_Sentence]:
    return [s for s in ctx.sentences if ctx.names_entity(s, key)]


def _best_for(
    ctx: _Context, key: str, extra: frozenset[str] = frozenset(), *, require: bool = True
) -> _Sentence | None:
    """Return the sentence about an entity holding most of the question's relation terms.

    ``extra`` terms count a little too; None when no sentence holds any relation term
    and ``require`` is set.
    """
    found = _entity_sentences(ctx, key)
    if not found:
        return None
    best = max(found, key=lambda s: (ctx.coverage(s.terms) + 0.1 * len(extra & s.terms), -s.order))
    if not require:
        return best
    return best if ctx.coverage(best.terms) > 0 or not ctx.relation else None


def _value_kind(question: str) -> str:
    lex = active()
    if lex.lifespan_re.search(question):
        return "lifespan"
    if lex.early_re.search(question) or lex.late_re.search(question):
        return "date"
    if lex.more_re.search(question) or lex.less_re.search(question):
        return "number"
    return ""


def _compared_value(ctx: _Context, key: str, vkind: str) -> tuple[float, _Sentence] | None:
    """Return the date (as a year) or number the compared entity's best sentence states."""
    best: tuple[tuple[float, int], float, _Sentence] | None = None
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
            nums = _values(ctx, s, "number", set())
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


def _described_referent(ctx: _Context, option: str) -> tuple[str, _Sentence] | None:
    """Resolve "the lead of X" to the entity filling the role, and the sentence saying so."""
    q = ctx.needs.question
    i = q.find(option)
    m = active().role_of_re.search(q[:i]) if i >= 0 else None
    if not m:
        return None
    role = stem(fold(m.group(1)))
    best: tuple[int, str, _Sentence] | None = None
    for s in _entity_sentences(ctx, normalize_name(option)):
        if role not in s.terms:
            continue
        cands = _name_candidates(ctx, s, "person", {ctx.canon(normalize_name(option))}, "")
        pick = _nearest(
            cands, [t.start() for t in _TOKEN.finditer(s.text) if stem(fold(t.group(0))) == role]
        )
        if pick and (best is None or s.order < best[2].order):
            best = (pick[0], pick[1], s)
    return (best[1], best[2]) if best else None


def _pick_by_values(
    ctx: _Context, names: Sequence[str], vkind: str
) -> tuple[int, list[_Sentence]] | None:
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


def _choice(ctx: _Context) -> ComposedAnswer | None:
    needs = ctx.needs
    options = list(needs.options) or [e.name for e in needs.entities[:2]]
    if len(options) < 2:
        return None
    options = options[:2]
    referents = [_described_referent(ctx, o) for o in options]
    names = [r[0] if r else o for r, o in zip(referents, options, strict=True)]
    lead = [r[1] for r in referents if r]
    vkind = _value_kind(needs.question)
    if vkind:
        got = _pick_by_values(ctx, names, vkind)
        if got:
            pick, sents = got
            return _answer(ctx, "choice", names[pick], [*lead, *sents], 0.7)
    # No comparable value: the option whose sentences state more of the relation and
    # of the question's other names ("a giant dog breed").
    option_keys = {normalize_name(o) for o in options}
    extra = frozenset().union(*(terms(e.name) for e in needs.entities if e.key not in option_keys))
    best = [_best_for(ctx, normalize_name(n), extra) for n in names]
    cover = [ctx.coverage(b.terms) + 0.1 * len(extra & b.terms) if b else -1.0 for b in best]
    sents = [b for b in best if b]
    if cover[0] == cover[1]:
        return _answer(ctx, "choice", "", [*lead, *sents], 0.0) if sents else None
    pick = 0 if cover[0] > cover[1] else 1
    return _answer(ctx, "choice", names[pick], [*lead, *sents], 0.3)


def _yes_no(ctx: _Context) -> ComposedAnswer | None:
    needs = ctx.needs
    q = needs.question
    q_negated = _negated(q)
    ents = [e.name for e in needs.entities if e.key not in set(needs.answer_modifiers)]
    keys = [normalize_name(n) for n in ents]
    lex = active()
    if len(ents) >= 2 and lex.same_re.search(q):
        return _yes_no_same(ctx, ents[:2])
    if len(ents) >= 2 and not lex.all_re.search(q):
        vkind = _value_kind(q)
        if vkind:
            got = _pick_by_values(ctx, ents[:2], vkind)
            if got:
                pick, sents = got
                verdict = (pick == 0) != q_negated
                return _answer(ctx, "yes_no", "yes" if verdict else "no", sents, 0.6)
    # Each named entity needs a sentence stating the relation; a negated one says no.
    targets = keys[:2] if lex.all_re.search(q) and len(keys) >= 2 else keys[:1]
    others = frozenset().union(*(terms(n) for n in ents)) if ents else frozenset()
    support: list[_Sentence] = []
    for key in targets:
        s = _best_for(ctx, key, others)
        if s is None or ctx.coverage(s.terms) < 0.5:
            if s is not None:
                support.append(s)
            return _answer(ctx, "yes_no", "", support, 0.0) if support else None
        support.append(s)
    if not support:
        return None
    negated = any(_negated(s.text) for s in support)
    return _answer(ctx, "yes_no", "no" if negated != q_negated else "yes", support, 0.5)


def _yes_no_same(ctx: _Context, ents: Sequence[str]) -> ComposedAnswer | None:
    q = ctx.needs.question
    tokens = [fold(t) for t in _TOKEN.findall(q)]
    by_year = any(_in_heads(t, active().time_heads) for t in tokens)
    values: list[str] = []
    support: list[_Sentence] = []
    for name in ents:
        key = normalize_name(name)
        # "The same country": the sentences state the value ("a British band"), not
        # the attribute's name, so the entity's best sentence need not hold it.
        s = _best_for(ctx, key, require=False)
        if s is None:
            return _answer(ctx, "yes_no", "", support, 0.0) if support else None
        support.append(s)
        if by_year:
            m = YEAR_RE.search(s.text)
            value = m.group(1) if m else ""
        else:
            others = {ctx.canon(normalize_name(n)) for n in ents}
            cands = _name_candidates(ctx, s, "entity", others, "")
            got = _nearest(cands, _relation_positions(ctx, s.text))
            value = ctx.canon(normalize_name(got[1])) if got else ""
        values.append(value)
    if not all(values):
        return _answer(ctx, "yes_no", "", support, 0.0)
    return _answer(ctx, "yes_no", "yes" if values[0] == values[1] else "no", support, 0.6)


# ---------------------------------------------------------------------------
# Composition.


def _missing(ctx: _Context, gaps: Sequence[_GapLike]) -> str:
    reasons = [g.reason for g in gaps if getattr(g, "reason", "")]
    if reasons:
        return "; ".join(dict.fromkeys(reasons))
    what = " ".join(ctx.needs.relation_terms) or "the question"
    names = ", ".join(e.name for e in ctx.needs.entities)
    return f"no sentence states '{what}'" + (f" for {names}" if names else "")


def _answer(
    ctx: _Context,
    kind: str,
    short: str,
    sentences: Sequence[_Sentence],
    confidence: float,
    missing: str = "",
) -> ComposedAnswer:
    seen: set[tuple[int, str]] = set()
    support: list[tuple[int, str]] = []
    for s in sentences:
        if (s.n, s.text) not in seen:
            seen.add((s.n, s.text))
            support.append((s.n, s.text))
    body = " ".join(f"{text} [{n}]" for n, text in support)
    shown = short[:1].upper() + short[1:] if kind == "yes_no" else short
    text = f"{shown} — {body}" if short and body else (shown or body)
    if missing:
        text = f"{text} Not found in the context: {missing}." if text else missing
    return ComposedAnswer(
        answer=text,
        short=short,
        support=tuple(support),
        cited=tuple(sorted({n for n, _ in support})),
        missing=missing,
        kind=kind,
        confidence=confidence if short else 0.0,
    )


def _decline(
    ctx: _Context | None, kind: str, gaps: Sequence[_GapLike], why: str = ""
) -> ComposedAnswer:
    missing = why or (_missing(ctx, gaps) if ctx is not None else "")
    if not missing:
        missing = why or "the context is empty"
    return ComposedAnswer(
        answer=f"Insufficient evidence: {missing}.",
        short="",
        support=(),
        cited=(),
        insufficient=True,
        missing=missing,
        kind=kind,
    )


def _chain_answer(ctx: _Context, kind: str, gaps: Sequence[_GapLike]) -> ComposedAnswer | None:
    hops = question_hops(ctx.needs)
    head = answer_head(ctx.needs.question)
    chain = _best_chain(ctx, kind, hops, head)
    if chain is None:
        return None
    cover = ctx.coverage(chain.covered)
    anchored = ctx.anchored(chain.sentences[0])
    reached = _reaches(ctx, chain, hops)
    short = ""
    if kind in _VALUED_KINDS and reached:
        short = _short(ctx, chain.sentences[-1], kind, set(chain.links), head)
    valued = kind in _VALUED_KINDS and any(
        _best_value(ctx, x, kind, set(chain.links), head) for x in chain.sentences
    )
    if not (cover > 0 or (anchored and (not ctx.relation or valued))):
        return None
    if reached:
        confidence = min(1.0, 0.3 + 0.5 * cover + (0.2 if anchored else 0.0)) if short else 0.0
        # Without a short answer the sentences may only be about the topic: when the
        # gate left gaps open, say what it found missing.
        missing = "" if short or not gaps else _missing(ctx, gaps)
        return _answer(ctx, kind, short, chain.sentences, confidence, missing)
    # A hop is missing: show what the context has, the chain so far and the sentence
    # closest to the answer, and say what is missing.
    sentences = list(chain.sentences)
    if kind in _VALUED_KINDS:
        closest = [
            s
            for s in ctx.sentences
            if s not in sentences and _best_value(ctx, s, kind, set(chain.links), head)
        ]
        if closest:
            best = max(
                closest,
                key=lambda s: (
                    ctx.coverage(s.terms),
                    (_best_value(ctx, s, kind, set(chain.links), head) or (0.0, ""))[0],
                    -s.order,
                ),
            )
            if ctx.coverage(best.terms) > 0:
                sentences.append(best)
    return _answer(ctx, kind, "", sentences, 0.0, _missing(ctx, gaps))


def _with_gaps(ctx: _Context, got: ComposedAnswer, gaps: Sequence[_GapLike]) -> ComposedAnswer:
    """Add what the gate found missing to an answer that gives no short span."""
    if got.short or got.missing or got.insufficient or not gaps:
        return got
    missing = _missing(ctx, gaps)
    return dataclasses.replace(
        got, answer=f"{got.answer} Not found in the context: {missing}.", missing=missing
    )


def compose_answer(
    needs: QuestionNeeds, spans: Sequence[SpanText], gaps: Sequence[_GapLike] = ()
) -> ComposedAnswer:
    """Compose the offline answer from the packed spans (see the module docstring).

    Args:
        needs: The question's needs (entities, relation terms, answer type, hops).
        spans: The packed spans, with their citation numbers.
        gaps: Gaps the sufficiency gate left open: they say what is missing when the
            answer declines or a hop is not in the context; they never, alone, make
            the composer decline.

    Returns:
        The :class:`ComposedAnswer`; ``insufficient`` only when no sentence of the
        context answers anything the question asks.

    """
    kind = answer_kind(needs)
    if not spans:
        return _decline(None, kind, gaps, "the context is empty")
    ctx = _Context(needs, spans)
    if not ctx.sentences:
        return _decline(ctx, kind, gaps)
    got: ComposedAnswer | None = None
    if kind == "yes_no":
        got = _yes_no(ctx)
    elif kind == "choice" or (
        needs.structure == "comparison" and len(needs.entities) >= 2 and _value_kind(needs.question)
    ):
        got = _choice(ctx)
        if got is not None and not got.short and kind != "choice":
            got = None
    if got is None:
        got = _chain_answer(ctx, kind, gaps)
    if got is None:
        return _decline(ctx, kind, gaps)
    return _with_gaps(ctx, got, gaps)


def extractive_answer(needs: QuestionNeeds, spans: Sequence[SpanText]) -> OfflineAnswer:
    """Return the short answer alone: ``yes``/``no``, an option, a date, number or name.

    Cites the sentence the short answer was read from (both compared sentences for
    a comparison). Empty when no short answer is recognised with confidence.
    """
    got = compose_answer(needs, spans)
    if not got.short:
        return OfflineAnswer("", (), 0.0)
    if got.kind in ("yes_no", "choice"):
        return OfflineAnswer(got.short, got.cited, got.confidence)
    holding = [n for n, text in got.support if got.short in text]
    cited = (holding[-1],) if holding else got.cited[-1:]
    return OfflineAnswer(got.short, cited, got.confidence)
