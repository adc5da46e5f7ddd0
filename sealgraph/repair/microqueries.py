"""Micro-queries: one atomic, entity-anchored query per gap.

A micro-query names one entity and, when the gap is about a relation or a
qualifier, the words of that relation ("Dana Whitcombe date of birth", not "tell me
about Dana Whitcombe"). It carries the documents the gazetteer or the ledger's links
already point to, so retrieval can look them up by title before searching.
Queries already issued are never repeated.

:class:`MicroQuery` is a plain value of :mod:`sealgraph.model`, importable from here.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from sealgraph.model import Gap, MicroQuery
from sealgraph.text.lexicon import active
from sealgraph.text.names import normalize_name

__all__ = ["MicroQuery", "micro_queries"]


def _query_key(text: str) -> str:
    return normalize_name(text)


def micro_queries(
    gaps: Sequence[Gap],
    issued: Iterable[str],
    *,
    doc_titles: dict[str, str],
    limit: int = 6,
) -> list[MicroQuery]:
    """Return at most ``limit`` new micro-queries, one per gap (plus one per bridge target).

    Args:
        gaps: The gap specification, in priority order.
        issued: Texts of micro-queries issued in earlier loops (never repeated).
        doc_titles: Title of every document id a gap may point to.
        limit: Most queries returned.

    """
    seen = {_query_key(q) for q in issued}
    out: list[MicroQuery] = []

    def add(q: MicroQuery) -> None:
        key = _query_key(q.text)
        if key and key not in seen and len(out) < limit:
            seen.add(key)
            out.append(q)

    for gap in gaps:
        if gap.kind == "missing_entity":
            text = f"{gap.entity} {gap.relation}".strip()
            add(MicroQuery(text, gap.entity, gap.kind, gap.targets))
        elif gap.kind == "missing_qualifier":
            words = gap.relation or active().qualifier_query_words.get(gap.qualifier or "", "")
            add(MicroQuery(f"{gap.entity} {words}".strip(), gap.entity, gap.kind, gap.targets))
        else:
            if gap.targets:
                for doc in gap.targets:
                    title = doc_titles.get(doc, "")
                    if title:
                        add(MicroQuery(f"{title} {gap.relation}".strip(), title, gap.kind, (doc,)))
            for name, relation in gap.hops:
                add(MicroQuery(f"{name} {relation}".strip(), name, gap.kind, ()))
            anchor = gap.entity if gap.entity and not gap.entity.startswith("the question") else ""
            add(MicroQuery(f"{anchor} {gap.relation}".strip(), anchor, gap.kind, ()))
    return out
