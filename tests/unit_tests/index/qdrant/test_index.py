"""The index held by Qdrant (``qdrant+memory://``, the client's in-process local mode).

Every test builds the tiny corpus (or a few documents) into its own collection of
the process's in-memory Qdrant and, where it says so, into a folder index with the
same fake embedder, and checks that the two answer alike.
"""

from __future__ import annotations

import json
import time
import uuid
from pathlib import Path

import numpy as np
import pytest
from support.fakes import HashEmbedder, write_tiny_docs

pytest.importorskip("qdrant_client")

from qdrant_client import models

from sealgraph import build_graph
from sealgraph.cli import main
from sealgraph.config import RetrievalConfig
from sealgraph.errors import (
    EmbedderMismatchError,
    IndexCorruptError,
    InputError,
    SealgraphError,
)
from sealgraph.index import (
    BatchSearch,
    QdrantIndex,
    SearchIndex,
    build_index,
    load_index,
    refresh_lexical,
    remove_documents,
    verify_index,
)
from sealgraph.index._registry import parse_index_address
from sealgraph.index.qdrant._address import QdrantAddress
from sealgraph.index.qdrant._store import MANIFEST_ID, Collection, connect
from sealgraph.types import Document

QUESTION = "In which province is the town where Northwind Studio was founded?"
QUERIES = ["lamp designed studio", "Northwind Studio founded", "Port Ellis harbour", "Ada"]


def _quiet(_: str) -> None:
    pass


def _address() -> str:
    return f"qdrant+memory://t{uuid.uuid4().hex[:12]}"


def _client():
    return connect(QdrantAddress(collection="any"))


@pytest.fixture(scope="module")
def twins(tmp_path_factory):
    """The tiny corpus as a folder index and as a Qdrant index, same fake embedder."""
    root = tmp_path_factory.mktemp("twins")
    docs = write_tiny_docs(root / "docs")
    embedder = HashEmbedder()
    folder = build_index(docs, root / "index", embedder=embedder, warn=_quiet)
    qdrant = build_index(docs, _address(), embedder=embedder, warn=_quiet)
    return folder, qdrant


def _ranked(hits):
    return [(h.chunk_id, round(h.score, 4)) for h in hits]


# -- addresses ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("qdrant+memory://finance", QdrantAddress(collection="finance")),
        ("qdrant://db.example:6334/idx", QdrantAddress("idx", "db.example", 6334, False)),
        ("qdrant://db.example/idx", QdrantAddress("idx", "db.example", 6333, False)),
        ("qdrants://db.example:443/my_docs-2", QdrantAddress("my_docs-2", "db.example", 443, True)),
    ],
)
def test_addresses_name_a_collection(value, expected):
    assert parse_index_address(value) == expected
    assert parse_index_address(expected.url) == expected  # the URL it shows reads back


def test_a_path_is_a_folder():
    assert parse_index_address("my-index") == Path("my-index")
    assert parse_index_address(Path("/x/y")) == Path("/x/y")


@pytest.mark.parametrize(
    ("value", "needle"),
    [
        ("http://db:6333/idx", "unknown index address"),
        ("s3://bucket/idx", "unknown index address"),
        ("qdrant://user:secret@db:6333/idx", "SEALGRAPH_QDRANT_API_KEY"),
        ("qdrant://db:6333/idx?api_key=secret", "no query"),
        ("qdrant://db:6333/", "bad collection name"),
        ("qdrant://db:6333/a/b", "bad collection name"),
        ("qdrant:///idx", "no host"),
        ("qdrant://db:notaport/idx", "bad index address"),
        ("qdrant+memory://", "bad collection name"),
    ],
)
def test_bad_addresses_are_one_line_errors(value, needle):
    with pytest.raises(InputError, match=needle) as caught:
        parse_index_address(value)
    assert "\n" not in str(caught.value)
    assert "secret" not in str(caught.value)  # a key typed into the URL is not echoed


# -- reading: the same answers as the folder index ------------------------------


def test_it_is_a_search_index_and_the_graph_runs_on_it(twins):
    folder, qdrant = twins
    assert isinstance(qdrant, QdrantIndex)
    assert isinstance(qdrant, SearchIndex)
    assert (qdrant.n_docs, qdrant.n_chunks) == (folder.n_docs, folder.n_chunks)
    graph_f = build_graph(folder, config={"k": 2})
    graph_q = build_graph(qdrant, config={"k": 2})
    out_f = graph_f.invoke({"question": QUESTION})
    out_q = graph_q.invoke({"question": QUESTION})
    assert [e["chunk_id"] for e in out_q["evidence"]] == [e["chunk_id"] for e in out_f["evidence"]]
    assert out_q["answer"] == out_f["answer"]


@pytest.mark.parametrize("query", QUERIES)
def test_lexical_search_and_scores_are_the_folder_index_bm25(twins, query):
    folder, qdrant = twins
    assert _ranked(qdrant.search_lexical(query, 6)) == _ranked(folder.search_lexical(query, 6))
    ids = [c.chunk_id for c in folder.iter_chunks()]
    np.testing.assert_allclose(
        qdrant.score_lexical(query, ids), folder.score_lexical(query, ids), atol=1e-4
    )
    assert qdrant.search_lexical("the of and", 5) == []  # only stop words: no term


def test_dense_and_hybrid_search_match_the_folder_index(twins):
    folder, qdrant = twins
    for query in QUERIES[:3]:
        assert _ranked(qdrant.search_dense(query, 3)) == _ranked(folder.search_dense(query, 3))
        assert _ranked(qdrant.search_hybrid(query, 4)) == _ranked(folder.search_hybrid(query, 4))
    lexical_only = RetrievalConfig(dense_weight=0.0)
    assert _ranked(qdrant.search_hybrid(QUERIES[0], 3, lexical_only)) == _ranked(
        qdrant.search_lexical(QUERIES[0], 3)
    )
    hybrid = qdrant.search_hybrid(QUERIES[0], 3)
    assert {h.source for h in hybrid} == {"hybrid"} and [h.rank for h in hybrid] == [0, 1, 2]


def test_searching_many_queries_finds_what_each_search_finds(twins):
    folder, qdrant = twins
    queries = QUERIES[:3]
    assert isinstance(qdrant, BatchSearch) and isinstance(folder, BatchSearch)
    # (local mode's float32 cosines vary in the last bits from call to call: ranks compared)
    hybrid = qdrant.search_hybrid_many(queries, 4)
    assert [_ranked(h) for h in hybrid] == [_ranked(qdrant.search_hybrid(q, 4)) for q in queries]
    dense = qdrant.search_dense_many(queries, 3)
    assert [_ranked(h) for h in dense] == [_ranked(qdrant.search_dense(q, 3)) for q in queries]


def test_chunk_reads_match_the_folder_index(twins):
    folder, qdrant = twins
    chunks = list(folder.iter_chunks())
    ids = [c.chunk_id for c in chunks]
    assert list(qdrant.iter_chunks()) == chunks
    assert qdrant.get_chunks(ids[::-1]) == chunks[::-1]
    assert qdrant.titles() == folder.titles()
    assert qdrant.headings() == folder.headings()
    assert qdrant.document_headings() == folder.document_headings()
    assert qdrant.first_chunk_texts() == folder.first_chunk_texts()
    for chunk_id in ids:
        doc_id = chunk_id.split("#")[0]
        assert qdrant.doc_chunks(doc_id) == folder.doc_chunks(doc_id)
        assert qdrant.neighbors(chunk_id, 1, 2) == folder.neighbors(chunk_id, 1, 2)
    for _, title in folder.titles():
        assert qdrant.lookup_title(title) == folder.lookup_title(title)
    np.testing.assert_allclose(qdrant.chunk_vectors(ids), folder.chunk_vectors(ids), atol=1e-6)
    assert qdrant.doc_chunks("no such document") == []
    with pytest.raises(KeyError, match="unknown chunk id"):
        qdrant.get_chunk("nope#0")
    assert qdrant.embed_query("lamp").shape == (64,)
    assert [s["path"] for s in qdrant.source_files()] == [s["path"] for s in folder.source_files()]


def test_load_index_opens_it_again_with_its_embedder(twins):
    _, qdrant = twins
    again = load_index(qdrant.location, embedder=HashEmbedder(), warn=_quiet)
    assert again.generation == qdrant.generation and again.has_dense
    lexical_only = load_index(qdrant.location, embedder="none")
    assert not lexical_only.has_dense and lexical_only.search_dense("lamp", 3) == []
    with pytest.raises(EmbedderMismatchError):
        load_index(qdrant.location, embedder=HashEmbedder(name="other"))
    assert verify_index(qdrant.location) == qdrant.n_chunks + qdrant.n_docs + 1


def test_no_collection_is_a_clear_error():
    with pytest.raises(IndexCorruptError, match="does not exist"):
        load_index(_address())


# -- writing: add, update, remove, prune -----------------------------------------


def _key(chunk):
    return chunk.chunk_id


def _same_lexical(folder, qdrant, queries=QUERIES):
    for query in queries:
        assert _ranked(qdrant.search_lexical(query, 8)) == _ranked(folder.search_lexical(query, 8))


def test_add_update_prune_and_remove_keep_it_like_the_folder_index(tmp_path):
    docs = write_tiny_docs(tmp_path / "docs")
    embedder = HashEmbedder()
    address = _address()
    folder = build_index(docs, tmp_path / "index", embedder=embedder, warn=_quiet)
    qdrant = build_index(docs, address, embedder=embedder, warn=_quiet)
    first = qdrant.generation

    # Add a long document: the mean chunk length drifts, every chunk is re-weighted.
    extra = [Document("shop", "Lamp shop", "A lamp shop opened in Port Ellis in 1990. " * 12)]
    folder = build_index(extra, tmp_path / "index", embedder=embedder, warn=_quiet)
    qdrant = build_index(extra, address, embedder=embedder, warn=_quiet)
    counts = qdrant.manifest["counts"]
    assert (counts["documents_added"], counts["documents_kept"], counts["vectors_new"]) == (1, 5, 1)
    assert qdrant.generation == first + 1
    assert qdrant.manifest["lexical"]["weighted_avgdl"] == pytest.approx(
        qdrant.manifest["lexical"]["total_length"] / qdrant.n_chunks
    )
    _same_lexical(folder, qdrant, [*QUERIES, "lamp shop Port Ellis"])

    # Update one file: its vectors are reused where the chunk text is unchanged.
    (docs / "handbook.md").write_text(
        (docs / "handbook.md").read_text() + "\n\nA new closing line.\n"
    )
    embedded = embedder.documents_embedded
    qdrant = build_index(docs, address, embedder=embedder, warn=_quiet)
    folder = build_index(docs, tmp_path / "index", embedder=embedder, warn=_quiet)
    assert qdrant.manifest["counts"]["documents_updated"] == 5
    assert qdrant.manifest["counts"]["vectors_new"] < qdrant.n_chunks - 1
    assert embedder.documents_embedded - embedded < qdrant.n_chunks
    # (The folder index moves updated documents to the end; Qdrant keeps their place.)
    assert sorted(qdrant.iter_chunks(), key=_key) == sorted(folder.iter_chunks(), key=_key)

    # Prune a deleted file.
    (docs / "port_ellis.md").unlink()
    warned: list[str] = []
    kept = build_index(docs, address, embedder=embedder, warn=warned.append)
    assert kept.n_docs == 6 and any("did not read again" in w for w in warned)
    qdrant = build_index(docs, address, embedder=embedder, warn=_quiet, prune=True)
    folder = build_index(docs, tmp_path / "index", embedder=embedder, warn=_quiet, prune=True)
    assert sorted(qdrant.titles()) == sorted(folder.titles())
    assert qdrant.manifest["counts"]["documents_removed"] == 1
    assert not any(s["path"].endswith("port_ellis.md") for s in qdrant.source_files())

    # Remove by id and by file.
    qdrant = remove_documents(address, ["shop", str(docs / "ada_brightwater.txt")])
    folder = remove_documents(tmp_path / "index", ["shop", str(docs / "ada_brightwater.txt")])
    assert sorted(qdrant.titles()) == sorted(folder.titles())
    assert qdrant.manifest["counts"]["documents_removed"] == 2
    _same_lexical(folder, qdrant)
    # The generation holds what the manifest counts; the points that died before
    # the previous generation are gone.
    assert verify_index(address) == qdrant.n_chunks + qdrant.n_docs + 1
    died = models.FieldCondition(key="died", range=models.Range(lte=qdrant.generation - 1))
    name = address.split("://")[1]
    assert _client().count(name, count_filter=models.Filter(must=[died])).count == 0
    with pytest.raises(InputError, match="nothing was removed"):
        remove_documents(address, ["not-there"])
    with pytest.raises(InputError, match="would leave the index"):
        remove_documents(address, [str(docs)])


def test_replace_makes_it_hold_exactly_the_given_documents():
    address = _address()
    build_index([Document("a", "Alpha", "Quartz clocks keep time.")], address, embedder="none")
    index = build_index(
        [Document("b", "Beta", "Pendulum clocks swing.")], address, embedder="none", replace=True
    )
    assert index.titles() == [("b", "Beta")]
    assert index.search_lexical("quartz", 3) == []


def test_another_embedder_needs_another_collection():
    address = _address()
    build_index([Document("a", "Alpha", "Quartz clocks.")], address, embedder=HashEmbedder())
    other = HashEmbedder(dim=32, name="test:hash-32")
    for force in (False, True):
        with pytest.raises(EmbedderMismatchError, match="cannot be mixed"):
            build_index([Document("b", "B", "x y")], address, embedder=other, force=force)


def test_refresh_rewrites_the_lexical_vectors(tmp_path):
    address = _address()
    index = build_index(write_tiny_docs(tmp_path / "docs"), address, embedder="none")
    before = _ranked(index.search_lexical(QUERIES[1], 5))
    refreshed = refresh_lexical(address)
    assert _ranked(refreshed.search_lexical(QUERIES[1], 5)) == before
    assert refreshed.generation == index.generation + 1


# -- safety ------------------------------------------------------------------------


def _foreign_collection() -> tuple[str, list]:
    name = f"foreign{uuid.uuid4().hex[:10]}"
    client = _client()
    client.create_collection(
        name, vectors_config=models.VectorParams(size=4, distance=models.Distance.COSINE)
    )
    client.upsert(
        name,
        [
            models.PointStruct(id=i, vector=[1.0, 0, 0, float(i)], payload={"n": i})
            for i in range(3)
        ],
    )
    return name, _snapshot(name)


def _snapshot(name: str) -> list:
    points, _ = _client().scroll(name, limit=100, with_payload=True, with_vectors=True)
    info = _client().get_collection(name)
    return [
        json.dumps([p.model_dump(mode="json") for p in points], sort_keys=True),
        info.config.model_dump_json(),
    ]


def test_a_collection_sealgraph_did_not_make_is_refused_untouched(tmp_path):
    name, before = _foreign_collection()
    address = f"qdrant+memory://{name}"
    docs = write_tiny_docs(tmp_path / "docs")
    attempts = [
        lambda: build_index(docs, address, embedder="none"),
        lambda: build_index(docs, address, embedder="none", replace=True, force=True),
        lambda: load_index(address),
        lambda: remove_documents(address, ["0"]),
        lambda: refresh_lexical(address),
        lambda: verify_index(address),
    ]
    for attempt in attempts:
        with pytest.raises(InputError, match="not made by sealgraph"):
            attempt()
    assert _snapshot(name) == before


def test_a_failed_write_leaves_the_committed_generation_as_it_was(tmp_path, monkeypatch):
    import sealgraph.index.qdrant._write as write_module

    address = _address()
    docs = write_tiny_docs(tmp_path / "docs")
    index = build_index(docs, address, embedder="none")
    before = _ranked(index.search_lexical(QUERIES[0], 5))
    name = address.split("://")[1]
    n_points = _client().count(name).count

    def die(*_args, **_kwargs):
        raise RuntimeError("killed before the commit")

    monkeypatch.setattr(write_module._Writer, "commit", die)
    with pytest.raises(RuntimeError, match="killed"):
        build_index([Document("new", "New", "Lamp lamp lamp.")], address, embedder="none")
    with pytest.raises(RuntimeError, match="killed"):
        remove_documents(address, ["handbook.md"])
    monkeypatch.undo()
    again = load_index(address)
    assert again.generation == index.generation
    assert _ranked(again.search_lexical(QUERIES[0], 5)) == before
    assert _ranked(index.search_lexical(QUERIES[0], 5)) == before
    assert _client().count(name).count == n_points  # what the write added was undone


def test_a_reader_never_sees_a_write_in_progress(tmp_path, monkeypatch):
    import sealgraph.index.qdrant._write as write_module

    address = _address()
    index = build_index(write_tiny_docs(tmp_path / "docs"), address, embedder="none")
    titles = index.titles()
    hits = _ranked(index.search_lexical("handbook lamp", 20))
    seen = {}
    commit = write_module._Writer.commit

    def look_then_commit(self, manifest):
        reader = load_index(address)  # opened mid-write: the last committed generation
        seen["titles"] = reader.titles()
        seen["hits"] = _ranked(reader.search_lexical("handbook lamp", 20))
        commit(self, manifest)

    monkeypatch.setattr(write_module._Writer, "commit", look_then_commit)
    remove_documents(address, ["handbook.md"])
    assert seen["titles"] == titles and seen["hits"] == hits
    assert "handbook.md" not in dict(load_index(address).titles())
    # A reader opened before the write keeps its generation whole until the next write.
    assert index.titles() == titles
    assert _ranked(index.search_lexical("handbook lamp", 20)) == hits


def test_a_live_write_lease_is_waited_for_and_a_dead_one_taken_over(tmp_path):
    address = _address()
    build_index([Document("a", "Alpha", "Quartz clocks.")], address, embedder="none")
    parsed = parse_index_address(address)
    collection = Collection(connect(parsed), parsed)
    head = collection.head()
    head["writing"] = {"id": "someone", "since": time.time()}
    collection.put_head(head)
    with pytest.raises(SealgraphError, match="another write"):
        build_index([Document("b", "B", "x")], address, embedder="none", lock_timeout=0)
    head["writing"] = {"id": "someone", "since": time.time() - 3600}
    collection.put_head(head)
    index = build_index([Document("b", "Beta", "Pendulum.")], address, embedder="none")
    assert index.n_docs == 2
    assert _client().retrieve(parsed.collection, [MANIFEST_ID])[0].payload["writing"] is None


# -- command line --------------------------------------------------------------------


def test_the_command_line_takes_an_address(tmp_path, capsys, monkeypatch):
    import sealgraph.cli._env as env

    monkeypatch.setenv("SEALGRAPH_DATA_DIR", str(tmp_path / "data"))
    # The command line refuses qdrant+memory:// (the collection would die with the
    # process); in this one test process it outlives each command, as a server's would.
    monkeypatch.setattr(env, "refuse_in_memory", lambda value, args: None)
    docs = write_tiny_docs(tmp_path / "docs")
    address = _address()
    assert main(["index", str(docs), "--index", address, "--embedder", "none"]) == 0
    assert f"chunks into {address} " in capsys.readouterr().out
    db = str(tmp_path / "runs.sqlite")
    assert main(["ask", "Who designed the Lumen Lamp?", "--index", address, "--k", "2",
                 "--db", db, "--json"]) == 0  # fmt: skip
    out = json.loads(capsys.readouterr().out)
    assert out["answer"] and len(out["evidence"]) == 2
    monkeypatch.setenv("SEALGRAPH_INDEX", address)
    assert main(["index", "--verify"]) == 0
    assert "points match its manifest" in capsys.readouterr().out
    assert main(["index", "--remove", str(docs / "handbook.md")]) == 0
    assert f"from {address}:" in capsys.readouterr().out
    code = main(["index", str(docs), "--index", "ftp://host/x"])
    assert code != 0
    assert "unknown index address" in capsys.readouterr().err


# -- the offline reasoner's counts -----------------------------------------------------


def test_the_corpus_counts_are_the_folder_index_counts(twins):
    from sealgraph.index._bm25 import lexical_tokens
    from sealgraph.index.protocol import CorpusStatisticsSource
    from sealgraph.text.statistics import chunk_names

    folder, qdrant = twins
    assert isinstance(qdrant, CorpusStatisticsSource)
    ours, theirs = qdrant.statistics(), folder.statistics()
    assert ours is not None and theirs is not None
    assert ours.n_chunks == theirs.n_chunks and ours.n_documents == theirs.n_documents
    chunks = list(folder.iter_chunks())
    names = {key for c in chunks for key in chunk_names(c.text)} | {"nobody at all"}
    assert {k: ours.names.get(k) for k in names} == {k: theirs.names.get(k) for k in names}
    terms = {t for c in chunks for t in lexical_tokens(c.text)} | {"zzzz"}
    assert {t: qdrant.document_frequency(t) for t in terms} == {
        t: folder.document_frequency(t) for t in terms
    }
    assert len(ours.repeated_lines()) == len(theirs.repeated_lines())
    lines = {line for c in chunks for line in c.text.splitlines()}
    assert {x for x in lines if x in ours.repeated_lines()} == {
        x for x in lines if x in theirs.repeated_lines()
    }
    assert ours.gazetteer() is None  # the reasoner reads titles and headings in bulk instead


def test_the_counts_follow_adds_and_removals():
    from sealgraph.index._bm25 import lexical_tokens
    from sealgraph.text.statistics import chunk_names

    address = _address()
    docs = [Document("a", "Alpha", "Tomas Greyhill founded Alpha."), Document("b", "B", "x y")]
    index = build_index(docs, address, embedder="none")
    key = sorted(chunk_names("Tomas Greyhill founded Alpha."))[0]
    assert index.statistics().names.get(key) == 1
    index = build_index([Document("c", "C", "Tomas Greyhill again.")], address, embedder="none")
    assert index.statistics().names.get(key) == 2
    index = remove_documents(address, ["a"])
    assert index.statistics().names.get(key) == 1
    assert index.document_frequency(lexical_tokens("Greyhill")[0]) == 1


def test_an_add_with_other_chunk_settings_is_refused_unless_it_replaces():
    address = _address()
    doc = Document("a", "Alpha", "Quartz clocks keep time. " * 40)
    build_index([doc], address, embedder="none")
    other = Document("b", "Beta", "Pendulum clocks swing. " * 40)
    with pytest.raises(InputError, match="another chunk size"):
        build_index([other], address, embedder="none", max_chunk_tokens=64)
    assert load_index(address).titles() == [("a", "Alpha")]  # untouched
    index = build_index([doc, other], address, embedder="none", max_chunk_tokens=64, replace=True)
    assert index.manifest["chunker"]["max_tokens"] == 64 and index.n_docs == 2


@pytest.mark.parametrize(
    ("address", "needle"),
    [
        ("qdrant://127.0.0.1:9/idx", "cannot read the Qdrant collection qdrant://127.0.0.1:9/idx"),
        ("qdrant+memory://never-built", "a qdrant+memory:// collection lives in one process"),
    ],
)
def test_an_index_that_cannot_be_read_is_a_one_line_error(address, needle, tmp_path, capsys):
    code = main(["ask", "Who?", "--index", address, "--db", str(tmp_path / "runs.sqlite")])
    err = capsys.readouterr().err.strip().splitlines()
    assert code != 0 and len(err) == 1 and needle in err[0], err


def test_the_command_line_refuses_an_in_memory_address(tmp_path, capsys):
    docs = write_tiny_docs(tmp_path / "docs")
    for argv in (
        ["index", str(docs), "--index", "qdrant+memory://gone"],
        ["info", "--index", "qdrant+memory://gone"],
    ):
        code = main(argv)
        err = capsys.readouterr().err.strip().splitlines()
        assert code == 2 and len(err) == 1, err
        assert f"{argv[0]} cannot use qdrant+memory://gone" in err[0]
    assert not (tmp_path / "qdrant+memory:").exists()


def test_reads_page_through_the_collection(twins, monkeypatch):
    import sealgraph.index.qdrant._store as store

    folder, qdrant = twins
    monkeypatch.setattr(store, "PAGE", 3)  # 10 chunks, 5 documents: several pages each
    assert list(qdrant.iter_chunks()) == list(folder.iter_chunks())
    assert qdrant.titles() == folder.titles()
    ids = [c.chunk_id for c in folder.iter_chunks()]
    assert [c.chunk_id for c in qdrant.get_chunks(ids)] == ids
    assert qdrant.first_chunk_texts() == folder.first_chunk_texts()


def test_a_write_whose_lease_was_taken_over_leaves_the_new_writer_alone(monkeypatch):
    import sealgraph.index.qdrant._write as write_module

    address = _address()
    build_index([Document("a", "Alpha", "Quartz clocks.")], address, embedder="none")
    parsed = parse_index_address(address)
    collection = Collection(connect(parsed), parsed)
    renew = write_module._Writer.renew

    def taken_over(self, *, force=False):
        head = collection.head()
        head["writing"] = {"id": "the other writer", "since": time.time()}
        collection.put_head(head)  # as if this write had stalled past its lease
        renew(self, force=True)

    monkeypatch.setattr(write_module._Writer, "renew", taken_over)
    with pytest.raises(SealgraphError, match="took over"):
        build_index([Document("b", "Beta", "Pendulum.")], address, embedder="none")
    head = collection.head()
    assert head["writing"]["id"] == "the other writer"  # its lease is not given back by us
    # The failed write's points stay for the other writer (or the next taker) to undo.
    monkeypatch.undo()
    head["writing"] = {"id": "the other writer", "since": 0}  # that one died too
    collection.put_head(head)
    index = build_index([Document("c", "Gamma", "Sundials.")], address, embedder="none")
    assert sorted(index.titles()) == [("a", "Alpha"), ("c", "Gamma")]
    assert verify_index(address) == index.n_chunks + index.n_docs + 1


def test_trace_names_the_embedder_of_a_run_over_a_qdrant_index(twins):
    from sealgraph.cli.trace_cmd import _index_embedder

    _, qdrant = twins
    folder_name = _index_embedder(str(twins[0].path))
    assert _index_embedder(qdrant.location) == folder_name != "unknown (index not readable)"
    assert _index_embedder(_address()) == "unknown (index not readable)"  # never built
