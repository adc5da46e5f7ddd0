"""Names linked to documents by what the documents say, not by their titles.

A filing saved as "2023 Q1 INTC.pdf" with the title "04.01.2023 10Q Document" names
its company on its cover page: a line of its own, in capitals, "INTEL CORPORATION".
Such a line in a document's opening is a name the document gives itself
(:func:`opening_names`); a name a question writes that no title, alias or heading
of the corpus links ("Intel's gross margin") is linked to the documents whose opening
gives it (:func:`link_by_content`): the whole name, or its leading words ("Amazon" of
"AMAZON.COM, INC."), with legal-form words left out. A name every document's
opening gives ("SECURITIES AND EXCHANGE COMMISSION") tells no document apart and
links none.

Pure functions; :class:`sealgraph.ledger.knowledge.CorpusKnowledge` reads the
openings once per index and keeps the table.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable, Iterable, Mapping

from sealgraph.model import NeedEntity, QuestionNeeds
from sealgraph.text.aliases import strip_org_suffix
from sealgraph.text.lexicon import WORD_RE, active
from sealgraph.text.names import normalize_name

__all__ = ["OPENING_CHARS", "ContentNames", "link_by_content", "opening_names"]

OPENING_CHARS = 2500
"""How much of a document's text is its opening (a cover page, a letterhead)."""
_MAX_LINE_WORDS = 8


def opening_names(opening: str) -> frozenset[str]:
    """Keys of the names a document's opening gives on lines of their own, in capitals.

    A line whose letters are all capitals and that holds one to eight words ("INTEL
    CORPORATION", "AMAZON.COM, INC.") is read as a name; each gives its key and,
    without legal-form words, its short key ("intel corporation", "intel").
    """
    stop = active().stop_words
    out: set[str] = set()
    for line in opening.splitlines():
        text = line.strip().strip("#*_ ").strip()
        letters = [c for c in text if c.isalpha()]
        found = WORD_RE.findall(text)
        if len(letters) < 3 or not all(c.isupper() for c in letters):
            continue
        if not 1 <= len(found) <= _MAX_LINE_WORDS:
            continue
        key = normalize_name(text)
        if not key or key in stop:
            continue
        out.add(key)
        out.add(strip_org_suffix(key))
    return frozenset(out)


@dataclasses.dataclass(frozen=True)
class ContentNames:
    """The opening names of a corpus's documents, looked up by a question's name."""

    by_word: Mapping[str, tuple[tuple[str, str], ...]]
    """First word of a name key → ``(key, doc_id)`` pairs."""
    n_docs: int
    """Documents read."""

    @classmethod
    def read(cls, openings: Iterable[tuple[str, str]]) -> ContentNames:
        """Read ``(doc_id, opening text)`` pairs."""
        by_word: dict[str, list[tuple[str, str]]] = {}
        n = 0
        for doc_id, opening in openings:
            n += 1
            for key in opening_names(opening):
                by_word.setdefault(key.split()[0], []).append((key, doc_id))
        return cls({w: tuple(sorted(v)) for w, v in by_word.items()}, n)

    def documents(self, key: str) -> tuple[str, ...]:
        """Documents whose opening gives the name ``key`` (or a name it begins).

        None when every document read gives it: such a name tells nothing apart.
        """
        key = strip_org_suffix(key)
        if not key:
            return ()
        docs = {
            d
            for k, d in self.by_word.get(key.split()[0], ())
            if k == key or k.startswith(key + " ")
        }
        if len(docs) >= self.n_docs:
            return ()
        return tuple(sorted(docs))


def link_by_content(
    needs: QuestionNeeds, documents: Callable[[str], tuple[str, ...]]
) -> QuestionNeeds:
    """Link the question's names that nothing else links to documents that give them.

    ``documents(key)`` returns the documents whose opening gives a name
    (:meth:`ContentNames.documents`). Only names with no document are looked up; a
    name keeps no documents when none gives it. A run of names joined by "and" that
    links nowhere whole ("Amazon and Intel") is two names when each part links.
    """
    if all(e.targets for e in needs.entities):
        return needs
    entities: list[NeedEntity] = []
    changed = False
    for e in needs.entities:
        if e.targets or e.key in needs.answer_modifiers:
            entities.append(e)
            continue
        found = _content_entities(e, documents)
        changed = changed or found != [e]
        entities.extend(found)
    return dataclasses.replace(needs, entities=tuple(entities)) if changed else needs


def _content_entities(
    entity: NeedEntity, documents: Callable[[str], tuple[str, ...]]
) -> list[NeedEntity]:
    """Return the entity linked by content, or its parts around "and" when each part links."""
    docs = documents(entity.key)
    if docs:
        return [dataclasses.replace(entity, targets=docs, source="content")]
    joins = "|".join(map(re.escape, sorted(active().name_conjunctions)))
    names = re.split(rf"\s+(?:{joins})\s+", entity.name) if joins else [entity.name]
    if len(names) < 2:
        return [entity]
    parts = []
    for name in names:
        key = normalize_name(name)
        found = documents(key) if key else ()
        if not found:
            return [entity]
        parts.append(NeedEntity(name, key, found, "content"))
    return parts
