"""Initial retrieval of a question whose scope clause names a document."""

from __future__ import annotations

import pytest

from sealgraph.config import SealConfig
from sealgraph.ledger.knowledge import CorpusKnowledge
from sealgraph.ledger.needs import question_needs
from sealgraph.repair.candidates import initial_hits, scope_documents

POLICY = """# Acme

Acme collects your name and email address when you sign up.

## Sharing

Other users can see your public profile and the tasks you post.

## Security

We protect your data with encryption at rest and in transit.

## Cookies

Acme uses cookies to remember your language.
"""

OTHER = """# Brightlane

Brightlane sells your data to nobody. Other users can see the tasks you post on Brightlane.
Who can see my tasks? Everyone who visits Brightlane can see the tasks and data you post.
"""


@pytest.fixture(scope="module")
def index(tmp_path_factory):
    from sealgraph.index import build_index

    root = tmp_path_factory.mktemp("scoped")
    docs = root / "docs"
    docs.mkdir()
    (docs / "acme.md").write_text(POLICY, encoding="utf-8")
    (docs / "brightlane.md").write_text(OTHER, encoding="utf-8")
    return build_index(docs, root / "idx", embedder="none", max_chunk_tokens=20, warn=print)


def needs_of(index, question):
    return question_needs(question, CorpusKnowledge(index).gazetteer)


def test_a_scope_clause_names_its_documents(index):
    needs = needs_of(index, "Consider Acme's privacy policy; who can see the tasks I post?")
    assert scope_documents(needs) == ("acme.md",)
    assert scope_documents(needs_of(index, "Who can see the tasks I post on Acme?")) == ()


def test_scoped_questions_take_the_scope_documents_best_chunks_for_the_asked_clause(index):
    needs = needs_of(index, "Consider Acme's privacy policy; who can see the tasks I post?")
    hits = initial_hits(index, needs, 2, SealConfig())
    assert [index.get_chunk(h.chunk_id).doc_id for h in hits] == ["acme.md", "acme.md"]
    assert "tasks you post" in index.get_chunk(hits[0].chunk_id).text


def test_questions_without_a_scope_use_plain_hybrid_search(index):
    needs = needs_of(index, "Who can see the tasks I post?")
    hits = initial_hits(index, needs, 3, SealConfig())
    flat = index.search_hybrid(needs.question, 3, SealConfig().retrieval)
    assert [h.chunk_id for h in hits] == [h.chunk_id for h in flat]


def test_a_scope_document_with_fewer_chunks_than_k_is_topped_up_from_search(index):
    needs = needs_of(index, "Consider Brightlane's policy; who can see my tasks?")
    hits = initial_hits(index, needs, 4, SealConfig())
    assert len(hits) == 4
    assert index.get_chunk(hits[0].chunk_id).doc_id == "brightlane.md"
    assert len({h.chunk_id for h in hits}) == 4
