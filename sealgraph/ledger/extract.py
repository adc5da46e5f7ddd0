"""Offline extraction: entities, relations and qualifiers read from passages.

No model is involved. Entities are gazetteer mentions (titles, aliases, headings)
plus capitalised spans; the passage's own document title is its topic entity.
A relation is (topic, words of the sentence around the mention, mentioned entity);
qualifiers are dates, numbers and places found by patterns.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from sealgraph.ledger.gazetteer import Gazetteer, Mention
from sealgraph.ledger.ledger import Facts, Provenance, Qualifier, Relation
from sealgraph.text import content_words, normalize_name, stemmed_terms
from sealgraph.types import Chunk

_MONTHS = (
    "january|february|march|april|may|june|july|august|september|october|november|december|"
    "jan|feb|mar|apr|jun|jul|aug|sep|sept|oct|nov|dec"
)
DATE_RE = re.compile(
    rf"\b(?:(?:\d{{1,2}}\s+)?(?:{_MONTHS})\.?(?:\s+\d{{1,2}})?,?\s+\d{{3,4}}|"
    rf"\d{{4}}-\d{{2}}-\d{{2}}|(?:1[0-9]|20)\d{{2}}s?)\b",
    re.I,
)
NUMBER_RE = re.compile(
    r"\b(?:\d{1,3}(?:,\d{3})+|\d+(?:\.\d+)?)(?:\s*(?:%|percent|million|billion|thousand))?\b"
    r"|\b(?:one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|twenty|thirty|"
    r"forty|fifty|hundred|thousand|million|billion)\b",
    re.I,
)
_MONTH_NAMES = (
    "January|February|March|April|May|June|July|August|September|October|November|December|"
    "Jan|Feb|Mar|Apr|Jun|Jul|Aug|Sep|Sept|Oct|Nov|Dec"
)
# "in October 2018" is a date, not a place: a month name cannot start a place.
PLACE_RE = re.compile(
    rf"\b(?:in|at|from|near|based in|located in|born in)\s+(?!(?:{_MONTH_NAMES})\b)"
    r"((?:[A-Z][\w'’.-]+)(?:,?\s+[A-Z][\w'’.-]+){0,3})"
)


@dataclass(frozen=True, slots=True)
class PassageFeatures:
    """Everything the offline reasoner needs to know about one passage."""

    chunk_id: str
    """The passage."""
    doc_id: str
    """Its document."""
    topic: str
    """Normalised key of the document title (the passage's topic entity)."""
    title: str
    """Document title."""
    mentions: tuple[tuple[int, Mention], ...]
    """(sentence index, mention) for every gazetteer mention."""
    qualifiers: tuple[tuple[int, str, str], ...]
    """(sentence index, type, value) for dates, numbers and places."""
    words: frozenset[str]
    """Stemmed content words of title, headings and text."""
    sentence_words: tuple[frozenset[str], ...] = ()
    """Stemmed content words of each sentence."""
    text: str = ""
    """The passage text (what an LLM gate reads; the offline reasoner uses the fields above)."""

    def mentioned_keys(self) -> set[str]:
        """Normalised keys of every entity the passage mentions."""
        return {m.key for _, m in self.mentions}

    def mentioned_docs(self) -> set[str]:
        """Documents the passage links to through mentions (unambiguous ones only)."""
        return {m.targets[0] for _, m in self.mentions if len(m.targets) == 1}

    def qualifier_types(self) -> set[str]:
        """Types of the values the passage states."""
        return {t for _, t, _ in self.qualifiers}


def _sentence_of(spans: tuple[tuple[int, int], ...], pos: int) -> int:
    for i, (a, b) in enumerate(spans):
        if a <= pos < b:
            return i
    return max(0, len(spans) - 1)


def passage_features(chunk: Chunk, gazetteer: Gazetteer) -> PassageFeatures:
    """Read a passage's mentions, qualifiers and words (pure; cache the result)."""
    spans = chunk.sentences or ((0, len(chunk.text)),)
    text = chunk.text
    topic = gazetteer.title_key.get(chunk.doc_id) or normalize_name(chunk.title)
    mentions = []
    names: list[tuple[int, int]] = []
    for m in gazetteer.find_mentions(text):
        names.append((m.start, m.end))
        if chunk.doc_id in m.targets:
            continue  # the passage naming its own topic is not a link
        mentions.append((_sentence_of(spans, m.start), m))
    quals: list[tuple[int, str, str]] = []
    date_spans = []
    for m in DATE_RE.finditer(text):
        quals.append((_sentence_of(spans, m.start()), "date", m.group(0)))
        date_spans.append((m.start(), m.end()))
    for m in NUMBER_RE.finditer(text):
        if any(a <= m.start() < b for a, b in date_spans):
            continue
        quals.append((_sentence_of(spans, m.start()), "number", m.group(0)))
    for m in PLACE_RE.finditer(text):
        if any(a < m.start() < b for a, b in names):
            continue  # "in" inside a name ("Lost in Translation") introduces no place
        place = m.group(1).rstrip(".")  # a sentence-final full stop is not part of it
        quals.append((_sentence_of(spans, m.start(1)), "place", place))
    words = stemmed_terms(" ".join((chunk.title, *chunk.section, text)))
    sentence_words = tuple(stemmed_terms(text[a:b]) for a, b in spans)
    return PassageFeatures(
        chunk_id=chunk.chunk_id,
        doc_id=chunk.doc_id,
        topic=topic,
        title=chunk.title,
        mentions=tuple(mentions),
        qualifiers=tuple(quals),
        words=words,
        sentence_words=sentence_words,
        text=text,
    )


def extract_facts(chunks: list[Chunk], features: list[PassageFeatures]) -> Facts:
    """Turn passages into ledger facts: topic entities, mentions, relations, qualifiers."""
    ents = []
    rels = []
    quals = []
    for chunk, feat in zip(chunks, features, strict=True):
        spans = chunk.sentences or ((0, len(chunk.text)),)
        ents.append((feat.topic, chunk.title, (chunk.doc_id,), Provenance(chunk.chunk_id, 0), 1.0))
        for sent, m in feat.mentions:
            conf = 1.0 if m.kind == "title" else 0.8 if m.kind in ("alias", "heading") else 0.5
            prov = Provenance(chunk.chunk_id, sent)
            ents.append((m.key, m.surface, m.targets, prov, conf))
            a, b = spans[sent] if sent < len(spans) else (0, len(chunk.text))
            sentence = chunk.text[a:b]
            rel_words = [
                w
                for w in content_words(sentence)
                if w not in set(m.key.split()) and w not in set(feat.topic.split())
            ][:6]
            rels.append(Relation(feat.topic, " ".join(rel_words), m.key, prov, conf))
        for sent, qtype, value in feat.qualifiers:
            quals.append(Qualifier(feat.topic, qtype, value, Provenance(chunk.chunk_id, sent)))
    return Facts(tuple(ents), tuple(rels), tuple(quals), tuple(c.chunk_id for c in chunks))
