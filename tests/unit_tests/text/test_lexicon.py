"""The lexicon: English defaults, the one stemmer, swapping in another lexicon."""

from __future__ import annotations

import dataclasses
import json
import sys
import textwrap
import threading

import pytest

from sealgraph.config import SealConfig
from sealgraph.errors import ConfigError, StaleTokenizerError
from sealgraph.index import build_index, load_index, refresh_lexical
from sealgraph.index._bm25 import lexical_tokens
from sealgraph.ledger.gazetteer import Gazetteer
from sealgraph.ledger.needs import question_needs
from sealgraph.reasoning.answer import answer_kind
from sealgraph.text.lexicon import (
    Lexicon,
    active,
    content_words,
    get_lexicon,
    import_lexicon,
    lexicon_of,
    stem,
    use_lexicon,
    words,
)
from sealgraph.text.lexicon.english import ENGLISH
from sealgraph.types import Document

TINY_SPEC = "sealgraph_test_tiny_lexicon:TINY"

TINY_MODULE = """
import dataclasses

from sealgraph.text.lexicon.english import ENGLISH

# English with one more stop word ("zorp") and one more question word ("quien").
TINY = dataclasses.replace(
    ENGLISH,
    name="tiny",
    stop_words=ENGLISH.stop_words | {"zorp"},
    question_words=ENGLISH.question_words | {"quien"},
    wh_words=ENGLISH.wh_words | {"quien"},
    wh_kinds={**ENGLISH.wh_kinds, "quien": "agent"},
)
NOT_A_LEXICON = {"stop_words": ["zorp"]}
"""

DOCS = [
    Document("guild", "Reliability Guild", "The Reliability Guild is led by Mara Quill."),
    Document("zorp", "Zorp Notes", "Zorp zorp records every outage of the year."),
]


@pytest.fixture(scope="module")
def tiny_lexicon(tmp_path_factory):
    """The tiny lexicon, importable as ``sealgraph_test_tiny_lexicon:TINY``."""
    folder = tmp_path_factory.mktemp("lexicon_module")
    (folder / "sealgraph_test_tiny_lexicon.py").write_text(textwrap.dedent(TINY_MODULE))
    sys.path.insert(0, str(folder))
    try:
        yield import_lexicon(TINY_SPEC)
    finally:
        sys.path.remove(str(folder))


# -- English defaults and the stemmer ---------------------------------------------------


def test_english_is_the_default():
    assert active() is ENGLISH
    assert get_lexicon("english") is ENGLISH
    assert SealConfig().lexicon == "english"
    assert {"the", "of", "which"} <= ENGLISH.stop_words
    assert {"what", "which", "who", "how"} <= ENGLISH.question_words
    assert "january" in ENGLISH.calendar_words
    assert ENGLISH.comparative_re.search("Who is older, X or Y?")
    assert ENGLISH.tokenizer_version.startswith("english:snowball-english:")


def test_every_field_is_documented():
    import ast
    import inspect
    import itertools

    source = inspect.getsource(Lexicon)
    body = ast.parse(source).body[0].body
    documented = {
        stmt.target.id
        for stmt, after in itertools.pairwise(body)
        if isinstance(stmt, ast.AnnAssign)
        and isinstance(after, ast.Expr)
        and isinstance(after.value, ast.Constant)
        and isinstance(after.value.value, str)
    }
    assert {f.name for f in dataclasses.fields(Lexicon)} == documented


def test_the_stemmer_merges_inflections():
    assert stem("directed") == stem("directing") == stem("directs")
    assert stem("policies") == stem("policy")
    assert stem("albums") == stem("album")
    assert stem("guild's") == stem("guild’s") == stem("guild")
    assert stem("led") == stem("leads") == stem("lead")  # an irregular form
    assert stem("1945") == "1945"


def test_one_tokenizer():
    assert words("Renée's Café, 2019!") == ["renee's", "cafe", "2019"]
    assert content_words("The guild of the year") == ["guild", "year"]
    assert lexical_tokens("The guilds' leaders") == [stem("guilds"), stem("leaders")]


def test_the_stemmer_is_safe_across_threads():
    found = set()

    def work():
        found.add(tuple(ENGLISH._stem_word(w) for w in ("running", "policies", "cats") * 200))

    threads = [threading.Thread(target=work) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert found == {("run", "polici", "cat") * 200}


# -- Errors ------------------------------------------------------------------------------


def test_unknown_lexicon_gives_a_clear_error(tiny_lexicon):
    with pytest.raises(ConfigError, match=r"unknown lexicon 'klingon'.*english"):
        get_lexicon("klingon")
    with pytest.raises(ConfigError, match=r"lexicon: .*unknown lexicon 'klingon'"):
        SealConfig.from_dict({"lexicon": "klingon"})
    with pytest.raises(ConfigError, match="cannot import no_such_module"):
        import_lexicon("no_such_module:LEX")
    with pytest.raises(ConfigError, match=r"is a dict, not a sealgraph\.text\.lexicon\.Lexicon"):
        import_lexicon("sealgraph_test_tiny_lexicon:NOT_A_LEXICON")
    with pytest.raises(ConfigError, match="unknown Snowball stemmer 'klingon'"):
        dataclasses.replace(ENGLISH, name="bad", stemmer="klingon")


# -- Swapping the lexicon ------------------------------------------------------------------


def test_a_swapped_lexicon_changes_tokenization(tiny_lexicon):
    assert content_words("zorp guild") == ["zorp", "guild"]
    assert lexical_tokens("zorp guild") == ["zorp", stem("guild")]
    with use_lexicon(TINY_SPEC) as lex:
        assert lex is tiny_lexicon and active() is tiny_lexicon
        assert content_words("zorp guild") == ["guild"]
        assert lexical_tokens("zorp guild") == [stem("guild")]
    assert active() is ENGLISH
    assert tiny_lexicon.tokenizer_version != ENGLISH.tokenizer_version
    assert tiny_lexicon.tokenizer_version.startswith("tiny:snowball-english:")


def test_a_swapped_lexicon_changes_the_question_reading(tiny_lexicon):
    gazetteer = Gazetteer([("guild", "Reliability Guild")])
    question = "Quien leads the Reliability Guild?"
    english = question_needs(question, gazetteer)
    assert "quien" in english.relation_terms
    assert answer_kind(english) == "other"
    with use_lexicon(tiny_lexicon):
        tiny = question_needs(question, gazetteer)
        assert answer_kind(tiny) == "agent"  # its question word asks for an agent
    assert "quien" not in tiny.relation_terms
    assert "leads" in tiny.relation_terms
    assert [e.key for e in tiny.entities] == ["reliability guild"]


def test_config_names_the_lexicon_and_the_index_records_it(tiny_lexicon, tmp_path):
    config = SealConfig.from_dict({"lexicon": TINY_SPEC})
    assert SealConfig.from_dict(config.to_dict()).lexicon == TINY_SPEC
    assert config.override({"lexicon": "english"}).lexicon == "english"

    index = build_index(DOCS, tmp_path / "idx", embedder="none", lexicon=config.lexicon)
    manifest = json.loads((tmp_path / "idx" / "manifest.json").read_text())
    assert manifest["lexicon"] == TINY_SPEC
    assert manifest["lexical"]["tokenizer_version"] == tiny_lexicon.tokenizer_version
    assert index.lexicon is tiny_lexicon
    # Queries are tokenized with the index's lexicon, whatever lexicon is active.
    assert index.search_lexical("zorp", 5) == []
    loaded = load_index(tmp_path / "idx")
    assert loaded.lexicon is tiny_lexicon and lexicon_of(loaded) is tiny_lexicon
    assert loaded.search_lexical("zorp", 5) == []

    english = build_index(DOCS, tmp_path / "en", embedder="none")
    assert english.lexicon is ENGLISH
    assert [h.chunk_id for h in english.search_lexical("zorp", 5)] == ["zorp#0"]
    # Adding documents keeps the index's lexicon unless another is given.
    more = [Document("log", "Log", "Quiet year.")]
    assert build_index(more, tmp_path / "idx", embedder="none").lexicon is tiny_lexicon


def test_graph_nodes_read_with_the_index_lexicon(tiny_lexicon, tmp_path):
    from sealgraph.graph.builder import build_graph

    index = build_index(DOCS, tmp_path / "idx", embedder="none", lexicon=TINY_SPEC)
    out = build_graph(index).invoke({"question": "Quien leads the Reliability Guild?"})
    needs = next(e for e in out["seal_log"] if e["kind"] == "needs")["data"]
    assert "quien" not in needs["relation_terms"]
    assert active() is ENGLISH  # the run's lexicon did not leak out


def test_langgraph_threads_see_the_active_lexicon(tiny_lexicon):
    from typing import TypedDict

    from langgraph.graph import END, START, StateGraph

    class State(TypedDict, total=False):
        a: str
        b: str

    def node_a(state):
        return {"a": f"{active().name}@{threading.get_ident()}"}

    def node_b(state):
        return {"b": f"{active().name}@{threading.get_ident()}"}

    g = StateGraph(State)
    g.add_node("node_a", node_a)
    g.add_node("node_b", node_b)
    g.add_edge(START, "node_a")
    g.add_edge(START, "node_b")  # parallel branches run on LangGraph's executor threads
    g.add_edge("node_a", END)
    g.add_edge("node_b", END)
    graph = g.compile()
    with use_lexicon(tiny_lexicon):
        out = graph.invoke({})
    assert out["a"].startswith("tiny@") and out["b"].startswith("tiny@")
    assert graph.invoke({})["a"].startswith("english@")


# -- Stale tokenizers: the lexical part is rebuilt, nothing is embedded again ------------


def _make_stale(path):
    manifest = json.loads((path / "manifest.json").read_text())
    manifest["lexical"]["tokenizer_version"] = "words-stop-s1"  # the hand-written stemmer's
    (path / "manifest.json").write_text(json.dumps(manifest))


def test_a_stale_index_is_refreshed_without_embedding(tmp_path, hash_embedder):
    path = tmp_path / "idx"
    build_index(DOCS, path, embedder=hash_embedder)
    vectors = (path / "vectors.npy").read_bytes()
    _make_stale(path)
    with pytest.raises(StaleTokenizerError, match="sealgraph index --index"):
        load_index(path, embedder=hash_embedder)
    embedded = hash_embedder.documents_embedded
    index = refresh_lexical(path, embedder=hash_embedder)
    assert hash_embedder.documents_embedded == embedded
    assert (path / "vectors.npy").read_bytes() == vectors
    assert index.manifest["lexical"]["tokenizer_version"] == ENGLISH.tokenizer_version
    assert [h.chunk_id for h in index.search_lexical("led", 1)] == ["guild#0"]
    assert load_index(path, embedder=hash_embedder).n_chunks == 2
    assert sorted(p.name for p in tmp_path.iterdir()) == ["idx"]


def test_cli_index_without_paths_refreshes_the_lexical_part(tmp_path, capsys):
    from sealgraph.cli import main

    path = tmp_path / "idx"
    build_index(DOCS, path, embedder="none")
    _make_stale(path)
    assert main(["index", "--index", str(path)]) == 0
    assert "nothing embedded again" in capsys.readouterr().out
    assert load_index(path).n_docs == 2
    assert main(["index", "--index", str(path), "--lexicon", TINY_SPEC]) != 0
    assert "give the PATHs" in capsys.readouterr().err


def test_eval_cache_refreshes_a_stale_index_in_place(tmp_path, monkeypatch):
    import sealgraph.index
    from sealgraph.eval.index_cache import open_index

    monkeypatch.setenv("SEALGRAPH_CACHE_DIR", str(tmp_path / "cache"))
    first = open_index(DOCS, embedder="none")
    assert not first.reused
    _make_stale(first.path)

    def no_build(*args, **kwargs):
        raise AssertionError("the stale cached index was built again")

    monkeypatch.setattr(sealgraph.index, "build_index", no_build)
    again = open_index(DOCS, embedder="none")
    assert again.reused and again.path == first.path
    assert again.index.manifest["lexical"]["tokenizer_version"] == ENGLISH.tokenizer_version
