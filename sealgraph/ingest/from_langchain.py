"""LangChain documents in: ``Document`` objects from any LangChain loader, as sealgraph documents.

:func:`sealgraph.index.build_index` calls :func:`documents_from_langchain` on the
LangChain documents it is given; the retriever and the tool (documents out) live in
:mod:`sealgraph.integrations.langchain`.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable
from pathlib import PurePosixPath
from typing import Any
from urllib.parse import urlparse

from langchain_core.documents import Document as LangChainDocument

from sealgraph.errors import InputError
from sealgraph.text.normalize import normalize_for_matching
from sealgraph.types import Document

__all__ = ["documents_from_langchain"]


def documents_from_langchain(documents: Iterable[LangChainDocument]) -> list[Document]:
    """Turn LangChain ``Document`` objects into sealgraph documents (what build_index does).

    * id: the document's ``id``, else ``metadata["id"]``, else ``metadata["source"]``,
      else ``sha256:`` and the first 16 hex digits of the text's SHA-256. Ids
      derived from a source or the text that several documents share (the pages
      of one PDF, the pieces of a split file) get ``:1``, ``:2``, ... in the given
      order; an explicit id given twice is an error, as for any input.
    * title: ``metadata["title"]``, else the text's first Markdown ``# `` heading,
      else the file name of ``metadata["source"]`` without its extension, else the id.
    * text: ``page_content``, normalised as every document sealgraph reads
      (:mod:`sealgraph.text.normalize`: NFC, invisible characters removed, LF line
      ends); ``source`` is
      ``metadata["source"]``; the whole metadata is kept under
      ``metadata["langchain"]``.

    Raises:
        InputError: An item is not a LangChain ``Document``.

    """
    from sealgraph.text.chunking import markdown_headings

    items = list(documents)
    rows: list[tuple[str, bool, str, str, dict[str, Any]]] = []  # id, derived, text, source, meta
    for position, doc in enumerate(items):
        if not isinstance(doc, LangChainDocument):
            raise InputError(f"item {position} is {type(doc).__name__}, not a LangChain Document")
        meta = dict(doc.metadata or {})
        text = normalize_for_matching(doc.page_content)
        source = meta.get("source")
        source = str(source) if source not in (None, "") else ""
        explicit = doc.id if doc.id not in (None, "") else meta.get("id")
        if explicit not in (None, ""):
            rows.append((str(explicit), False, text, source, meta))
        elif source:
            rows.append((source, True, text, source, meta))
        else:
            digest = hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]
            rows.append((f"sha256:{digest}", True, text, source, meta))
    derived_counts: dict[str, int] = {}
    for doc_id, derived, *_ in rows:
        if derived:
            derived_counts[doc_id] = derived_counts.get(doc_id, 0) + 1
    seen: dict[str, int] = {}
    out: list[Document] = []
    for doc_id, derived, text, source, meta in rows:
        if derived and derived_counts[doc_id] > 1:
            seen[doc_id] = seen.get(doc_id, 0) + 1
            doc_id = f"{doc_id}:{seen[doc_id]}"
        title = meta.get("title")
        if not isinstance(title, str) or not title.strip():
            first_h1 = next((h for h in markdown_headings(text) if h.level == 1), None)
            title = first_h1.text if first_h1 is not None else (_source_stem(source) or doc_id)
        out.append(
            Document(
                doc_id=doc_id,
                title=normalize_for_matching(title.strip()),
                text=text,
                source=source,
                metadata={"langchain": {str(k): v for k, v in meta.items()}},
            )
        )
    return out


def _source_stem(source: str) -> str:
    """File name without extension of a path or URL (``""`` when there is none)."""
    if not source:
        return ""
    parsed = urlparse(source)
    path = parsed.path if parsed.scheme and parsed.netloc else source
    last = re.split(r"[\\/]", path.rstrip("/\\"))[-1]
    stem = PurePosixPath(last).stem if last else ""
    return stem or (parsed.netloc if parsed.scheme else "")
