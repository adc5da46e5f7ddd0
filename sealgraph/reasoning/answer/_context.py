"""The packed context read as sentences, with the names they mention.

:class:`Context` splits the packed spans into cited sentences, finds the names each
sentence writes and the aliases the context declares ("Payments Platform Team (PPT)",
a name's distinctive first word), and weighs the question's relation terms by how
rare they are in the context.
"""

from __future__ import annotations

import functools
import math
import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from sealgraph.ledger.needs import QuestionNeeds
from sealgraph.packing.scoring import boilerplate_reason, name_spans, phrase, terms
from sealgraph.reasoning.answer._kind import asked_terms
from sealgraph.reasoning.answer._types import SpanText
from sealgraph.reasoning.answer._units import ROW_LINE, read_units
from sealgraph.text.lexicon import WORD_RE, active, stem
from sealgraph.text.names import YEAR_RE, fold, normalize_name
from sealgraph.text.readable import readable

__all__ = ["ROW_LINE", "TOKEN", "Context", "Sentence", "date_parts"]

TOKEN = WORD_RE  # the one tokenizer's pattern, on unfolded text
_LIST_MARK = re.compile(r"^\s*(?:[-*+•]|\d{1,3}[.)])\s+")


@dataclass(slots=True)
class Sentence:
    """A cited unit of the context (a sentence, list item, table row or code block).

    With its terms and phrase, and the names it holds.
    """

    n: int
    doc_id: str
    title: str
    text: str
    order: int
    terms: frozenset[str]
    phrase: str
    names: list[tuple[int, str]] = field(default_factory=list)
    mentions: set[str] = field(default_factory=set)
    kind: str = "sentence"
    """``sentence``, ``item``, ``row`` or ``code`` (:mod:`._units`)."""
    heading: str = ""
    """The heading the unit is under: the span's own, else its innermost section's."""
    path: str = ""
    """Every heading above the unit, its document's title first, as a person reads them."""


def _clean(text: str) -> str:
    return " ".join(_LIST_MARK.sub("", text).split())


def _sentences(spans: Sequence[SpanText]) -> list[Sentence]:
    out: list[Sentence] = []
    for s in spans:
        # The span's innermost section heading (else its title's): what its units are
        # about when no heading line of its own precedes them.
        section = readable((s.section or s.title).rpartition(" > ")[2])
        path = readable(" > ".join(p for p in (s.title, s.section) if p))
        for unit in read_units(s.text):
            if unit.kind != "code" and boilerplate_reason(unit.text) in _NOT_CONTENT:
                continue
            text = unit.text if unit.kind == "code" else _clean(unit.text)
            if not text:
                continue
            heading = readable(unit.heading) or section
            out.append(
                Sentence(
                    s.n,
                    s.doc_id,
                    s.title,
                    text,
                    len(out),
                    terms(text) | synonym_keys(text),
                    phrase(text),
                    kind=unit.kind,
                    heading=heading,
                    path=path,
                )
            )
    return out


_NOT_CONTENT = ("front matter", "links", "pointer")


class Context:
    """The packed context read as sentences, with the names they mention."""

    def __init__(self, needs: QuestionNeeds, spans: Sequence[SpanText]) -> None:
        self.needs = needs
        self.sentences = _sentences(spans)
        self.titles = {s.doc_id: s.title for s in spans}
        self.alias: dict[str, str] = {}
        self.long_form: dict[str, str] = {}
        self._read_names(spans)
        self.anchors, self.anchor_docs = self._anchors()
        self.q_terms = terms(needs.question) | synonym_keys(needs.question)
        relation = " ".join(needs.relation_terms)
        self.relation = (terms(relation) | synonym_keys(relation)) or frozenset()
        self.asked = asked_terms(needs.question) & (self.relation | self.q_terms)
        self.q_months, self.q_years = date_parts(without_entities(needs))

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
        """Return the canonical key of a name: its aliases followed to the end."""
        seen = set()
        while key in self.alias and key not in seen:
            seen.add(key)
            key = self.alias[key]
        return key

    def _read_names(self, spans: Sequence[SpanText]) -> None:
        """Find every sentence's names, the context's aliases, and what each sentence mentions."""
        known, lower = self._name_words()
        openers = frozenset(known - active().stop_words)
        common = frozenset(lower)
        title_keys = {normalize_name(t) for t in self.titles.values() if normalize_name(t)}
        for s in self.sentences:
            s.names = name_spans(s.text, known_openers=openers, common_words=common)
        for text in [*self.titles.values(), *(s.text for s in spans)]:
            self._declared_aliases(text)
        name_keys = {normalize_name(n) for s in self.sentences for _, n in s.names}
        self._short_names(title_keys | name_keys, title_keys, known, lower)
        self._entity_aliases()
        self._read_mentions(title_keys)

    def _name_words(self) -> tuple[set[str], set[str]]:
        """Return the folded words the context writes in names, and those it writes in lower case.

        A title's first word counts as written in a name.
        """
        known: set[str] = set()
        lower: set[str] = set()
        for title in self.titles.values():
            known.update(fold(w) for w in normalize_name(title).split()[:1])
        for s in self.sentences:
            for _, name in name_spans(s.text):
                known.update(fold(w) for w in name.split())
            lower.update(w for w in TOKEN.findall(s.text) if w.islower())
        return known, lower

    def _entity_aliases(self) -> None:
        """Alias each question entity linked to a document of the context to its title."""
        for e in self.needs.entities:
            for d in e.targets:
                if d in self.titles:
                    tkey = normalize_name(self.titles[d])
                    if tkey and tkey != e.key:
                        self.alias.setdefault(e.key, tkey)
                    break

    def _read_mentions(self, title_keys: set[str]) -> None:
        """Find what each sentence mentions: its names, and the aliases and titles it writes."""
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

    def names_entity(self, s: Sentence, key: str) -> bool:
        """Whether the sentence names the entity ``key`` (or is in its document)."""
        key = self.canon(key)
        return key in s.mentions or self.canon(normalize_name(s.title)) == key

    def anchored(self, s: Sentence) -> bool:
        """Tell whether the sentence names a question entity (or is in its document)."""
        return bool(s.mentions & self.anchors) or s.doc_id in self.anchor_docs

    def coverage(self, covered: frozenset[str] | set[str]) -> float:
        """Return the share of the relation-term weight that ``covered`` holds."""
        if not self.total:
            return 0.0
        return sum(self.weight[t] for t in self.relation & covered) / self.total

    def links(self, a: Sentence, b: Sentence) -> set[str]:
        """Names that link sentence ``a`` to the next hop ``b`` (question entities aside)."""
        shared = (a.mentions & b.mentions) - self.anchors
        tkey = self.canon(normalize_name(b.title))
        if tkey in a.mentions and tkey not in self.anchors and a.doc_id != b.doc_id:
            shared.add(tkey)
        return shared


def synonym_keys(text: str) -> frozenset[str]:
    """Keys of the lexicon's synonym groups that ``text`` states a member of.

    A group's key is its first member's stem: "went live" gives "launch", so a
    sentence and a question stating one relation in different words share a term.
    """
    groups = active().reader.synonyms
    if not groups:
        return frozenset()
    stems = [stem(fold(w)) for w in TOKEN.findall(text)]
    joined = " " + " ".join(stems) + " "
    return frozenset(
        key for key, members in _stemmed_groups(groups) if any(m in joined for m in members)
    )


@functools.lru_cache(maxsize=8)
def _stemmed_groups(
    groups: tuple[tuple[str, ...], ...],
) -> tuple[tuple[str, tuple[str, ...]], ...]:
    out = []
    for group in groups:
        members = tuple(" " + " ".join(stem(fold(w)) for w in m.split()) + " " for m in group)
        out.append((members[0].strip(), members))
    return tuple(out)


def date_parts(text: str) -> tuple[frozenset[str], frozenset[str]]:
    """Month names and years a text states."""
    months = frozenset(
        fold(m.group(0)) for m in active().month_re.finditer(text) if m.group(0)[:1].isupper()
    )
    return months, frozenset(YEAR_RE.findall(text))


def without_entities(needs: QuestionNeeds) -> str:
    """Return the question with its entity names blanked ("Outage of March 2025")."""
    q = needs.question
    for e in needs.entities:
        q = q.replace(e.name, " ")
    return q
