"""Offline extraction: entities, relations and qualifiers read from passages.

No model is involved. Entities are gazetteer mentions (titles, aliases, headings)
plus capitalised spans; the passage's own document title is its topic entity.
A relation is (topic, words of the sentence around the mention, mentioned entity);
qualifiers are dates, numbers and places found by the active lexicon's patterns
(:mod:`sealgraph.text.lexicon`).
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass

from sealgraph.ledger.gazetteer import Gazetteer, Mention
from sealgraph.model import Facts, Provenance, Qualifier, Relation
from sealgraph.text.chunking import split_sentences
from sealgraph.text.lexicon import active, content_words, stemmed_terms, words
from sealgraph.text.names import normalize_name, proper_names
from sealgraph.types import Chunk


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
    names: tuple[tuple[int, str], ...] = ()
    """(sentence index, normalised key) of proper names written in the passage
    (capitalised runs of two or more words, titles or not). Through
    :class:`~sealgraph.ledger.knowledge.CorpusKnowledge` only the distinctive ones
    (named in few passages of the corpus) are kept: two passages naming the same
    rare person are linked even when neither is that person's page."""

    def words_of_sentence(self, i: int) -> frozenset[str]:
        """Stemmed content words of sentence ``i`` (the whole passage's when unknown)."""
        return self.sentence_words[i] if i < len(self.sentence_words) else self.words

    def words_of_topic(self) -> frozenset[str]:
        """Stemmed words of the passage's own title."""
        return stemmed_terms(self.title)

    def name_keys(self) -> set[str]:
        """Keys of the proper names the passage writes."""
        return {k for _, k in self.names}

    def written_names(self) -> tuple[tuple[int, str], ...]:
        """``(sentence, key)`` of every proper name the text writes, rare or not.

        :attr:`names` keeps only the distinctive ones (they link passages by
        themselves); a hop's answer is read among all of them ("Amy Poehler" is named
        in many passages, and is still what this sentence says plays the part).
        Sentences are those of :meth:`text_sentence_words`.
        """
        return _written_names(self.chunk_id, self.text)[0]

    def text_sentence_words(self, i: int) -> frozenset[str]:
        """Stemmed content words of sentence ``i`` of the text, as the splitter cuts it.

        A passage stored as one sentence (a multi-hop QA paragraph) is still read
        sentence by sentence here: which name a hop's words sit next to.
        """
        words_of = _written_names(self.chunk_id, self.text)[1]
        return words_of[i] if i < len(words_of) else self.words

    def mentioned_keys(self) -> set[str]:
        """Normalised keys of every entity the passage mentions."""
        return {m.key for _, m in self.mentions}

    def mentioned_docs(self) -> set[str]:
        """Documents the passage links to through mentions (unambiguous ones only)."""
        return {m.targets[0] for _, m in self.mentions if len(m.targets) == 1}

    def qualifier_types(self) -> set[str]:
        """Types of the values the passage states."""
        return {t for _, t, _ in self.qualifiers}

    def role_linked_docs(self, terms: frozenset[str]) -> frozenset[str]:
        """Documents the passage names right next to one of ``terms`` (stemmed words).

        "directed by Hale Varga" or "Hale Varga directed the film" state the
        relation the question asks about, where "starring Ines Morrow" in the
        same sentence is a side link: the role word must sit within a few words
        before the mention or just after it.
        """
        if not terms:
            return frozenset()
        return _role_linked_docs(self.chunk_id, self.text, self.mentions, terms)

    def role_named_keys(self, terms: frozenset[str]) -> frozenset[str]:
        """Keys of the passage's proper names written next to one of ``terms``.

        The content-link counterpart of :meth:`role_linked_docs` for names with no
        page of their own: "a treatise by the reformer Zed Young" names Zed Young in
        the role "by", and so does "Zed Young served as reformer" (the role a few
        words after the name, not given away by a "by"). Only names in :attr:`names`
        count (the distinctive ones, once filtered by the corpus knowledge).
        """
        if not terms or not self.names:
            return frozenset()
        return _role_named_keys(self.chunk_id, self.text, frozenset(self.name_keys()), terms)


# How far a role word may sit from the name it introduces ("was directed by X").
_ROLE_WORDS_BEFORE = 4
_ROLE_WORDS_AFTER = 1
_ROLE_CACHE: dict[tuple, frozenset[str]] = {}
_ROLE_CACHE_MAX = 50_000


def _memo(key: tuple, compute) -> frozenset[str]:
    """Return ``compute()`` cached under ``key`` in the bounded role-link cache."""
    hit = _ROLE_CACHE.get(key)
    if hit is None:
        hit = compute()
        if len(_ROLE_CACHE) >= _ROLE_CACHE_MAX:
            _ROLE_CACHE.clear()
        _ROLE_CACHE[key] = hit
    return hit


def _role_linked_docs(
    chunk_id: str,
    text: str,
    mentions: tuple[tuple[int, Mention], ...],
    terms: frozenset[str],
) -> frozenset[str]:
    lex = active()

    def compute() -> frozenset[str]:
        docs = set()
        for _, m in mentions:
            if len(m.targets) != 1:
                continue
            after = re.split(r"[.;!?](?:\s|$)", text[m.end : m.end + 40])[0]
            near = _holder_words(_words_before(text, m.start), terms)
            near += words(after)[:_ROLE_WORDS_AFTER]
            if any(lex.stem(w) in terms for w in near):
                docs.add(m.targets[0])
        return frozenset(docs)

    return _memo(("docs", lex, chunk_id, text, terms), compute)


def _holder_words(before: list[str], terms: frozenset[str]) -> list[str]:
    """Return the words before a name that may give it a role: none after "<role> of".

    "the tech lead of Project Kestrel": Kestrel is what is led, not who leads it.
    """
    lex = active()
    last = max((i for i, w in enumerate(before) if lex.stem(w) in terms), default=-1)
    if last >= 0 and any(w in lex.of_words for w in before[last + 1 :]):
        return []
    return before


def _role_named_keys(
    chunk_id: str, text: str, keys: frozenset[str], terms: frozenset[str]
) -> frozenset[str]:
    lex = active()

    def compute() -> frozenset[str]:
        return frozenset(
            name
            for start, name in proper_names(text)
            if name in keys
            and (
                any(lex.stem(w) in terms for w in _holder_words(_words_before(text, start), terms))
                or _role_after(text, start, len(name.split()), terms)
            )
        )

    return _memo(("names", lex, chunk_id, text, keys, terms), compute)


def _role_after(text: str, start: int, n_words: int, terms: frozenset[str]) -> bool:
    """Tell whether the name of ``n_words`` words at ``start`` is given the role after it.

    "Oluwaseun Adebayo served as incident commander": a role word a few words after
    the name, in its sentence, says who holds the role; "X, directed by Y" and "X was
    directed" do not (a "by" before or right after the role word, or a passive, gives
    the role to someone else).
    """
    lex = active()
    # A sentence ends at its mark, even one glued to the next ("Metrano.It was ...").
    after = re.split(r"[.;!?](?:\s|$|(?=[A-Z]))", text[start : start + 160])[0]
    following = words(after)[n_words : n_words + _ROLE_WORDS_BEFORE]
    # Only words that say "holds" may stand between ("X served as", "X is the", "X has
    # led": an auxiliary of the role's own verb): in "a Shaw Brothers kung fu film
    # directed by Y" the role is not the name's.
    linking = lex.auxiliaries | lex.determiners | lex.as_words | lex.holder_verbs
    for i, word in enumerate(following):
        if lex.stem(word) in terms:
            # "X was directed ...": passive, the role is someone else's.
            passive = i > 0 and following[i - 1] in lex.copulas
            return not passive and (i + 1 >= len(following) or following[i + 1] not in lex.by_words)
        if word not in linking:
            return False
    return False


def _words_before(text: str, start: int) -> list[str]:
    """Return the last few words before ``start`` within its sentence."""
    # Stop at a sentence end: a role word of the previous sentence says nothing.
    before = re.split(r"[.;!?]\s", text[max(0, start - 80) : start])[-1]
    return words(before)[-_ROLE_WORDS_BEFORE:]


@functools.lru_cache(maxsize=20_000)
def _written_names(
    chunk_id: str, text: str
) -> tuple[tuple[tuple[int, str], ...], tuple[frozenset[str], ...]]:
    """Every proper name of ``text`` by sentence, and each sentence's stemmed words."""
    spans = tuple(split_sentences(text)) or ((0, len(text)),)
    names = tuple(
        dict.fromkeys((_sentence_of(spans, start), key) for start, key in proper_names(text))
    )
    return names, tuple(stemmed_terms(text[a:b]) for a, b in spans)


def _sentence_of(spans: tuple[tuple[int, int], ...], pos: int) -> int:
    for i, (a, b) in enumerate(spans):
        if a <= pos < b:
            return i
    return max(0, len(spans) - 1)


def passage_features(chunk: Chunk, gazetteer: Gazetteer) -> PassageFeatures:
    """Read a passage's mentions, qualifiers and words (pure; cache the result)."""
    spans = chunk.sentences or ((0, len(chunk.text)),)
    text = chunk.text
    topic = gazetteer.title_key(chunk.doc_id) or normalize_name(chunk.title)
    mentions = []
    names: list[tuple[int, int]] = []
    for m in gazetteer.find_mentions(text):
        names.append((m.start, m.end))
        if chunk.doc_id in m.targets:
            continue  # the passage naming its own topic is not a link
        mentions.append((_sentence_of(spans, m.start), m))
    quals: list[tuple[int, str, str]] = []
    date_spans = []
    lex = active()
    for m in lex.date_re.finditer(text):
        quals.append((_sentence_of(spans, m.start()), "date", m.group(0)))
        date_spans.append((m.start(), m.end()))
    for m in lex.number_re.finditer(text):
        if any(a <= m.start() < b for a, b in date_spans):
            continue
        quals.append((_sentence_of(spans, m.start()), "number", m.group(0)))
    for m in lex.passage_place_re.finditer(text):
        if any(a < m.start() < b for a, b in names):
            continue  # "in" inside a name ("Lost in Fogland") introduces no place
        place = m.group(1).rstrip(".")  # a sentence-final full stop is not part of it
        quals.append((_sentence_of(spans, m.start(1)), "place", place))
    words = stemmed_terms(" ".join((chunk.title, *chunk.section, text)))
    sentence_words = tuple(stemmed_terms(text[a:b]) for a, b in spans)
    proper = tuple(
        dict.fromkeys(
            (_sentence_of(spans, start), key) for start, key in proper_names(text) if key != topic
        )
    )
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
        names=proper,
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
