"""Writing a Qdrant index: build, add, remove, prune, refresh, one generation at a time.

A write (see :mod:`sealgraph.index.qdrant._store` for the generations):

1. takes the collection's write lease (in the manifest point: one writer at a
   time; a lease not renewed for :data:`LEASE_S` is taken over, and what its
   writer left is undone first);
2. chunks and embeds the given documents as a folder build does (the same
   loaders, chunker, tokenizer and embedders; vectors of unchanged chunk text
   are reused from the collection);
3. adds their points as generation G + 1 and marks the points of the documents
   they replace, or that are removed, as dead from G + 1;
4. commits by rewriting the manifest point, then deletes the points that died
   before the previous generation (so a reader opened before this write keeps
   its generation whole until the next write commits).

Only the documents given or removed are touched, except when the corpus's mean
chunk length has drifted more than :data:`~sealgraph.index.qdrant._points.AVGDL_TOLERANCE`
from the one the stored lexical weights were made with: then every chunk's
sparse vector is re-weighted (from its stored text; nothing is embedded again).
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from sealgraph.errors import EmbedderMismatchError, InputError, SealgraphError
from sealgraph.index._bm25 import BM25_PARAMS, tokenizer
from sealgraph.index._documents import (
    covered,
    document_counts,
    documents_to_remove,
    merge_sources,
    pruned_source,
    stale_message,
)
from sealgraph.index._embed import embed_chunks, embedder_name
from sealgraph.index._parallel import build_workers, process_documents
from sealgraph.index._plan import _BuildPlan, manifest_lexicon, plan_documents, sealgraph_version
from sealgraph.index._progress import ProgressFn, _StderrProgress
from sealgraph.index.embedders import Embedder
from sealgraph.index.qdrant._address import QdrantAddress
from sealgraph.index.qdrant._points import (
    SEQ_STRIDE,
    chunk_from_payload,
    chunk_point,
    chunk_tokens,
    document_point,
    needs_reweighting,
)
from sealgraph.index.qdrant._stats import statistics_entry
from sealgraph.index.qdrant._store import (
    ALIVE,
    DENSE,
    Collection,
    connect,
    live_filter,
    match,
    match_any,
)
from sealgraph.ingest import WarnFn, warn_stderr
from sealgraph.text.chunking import FIELD_WEIGHT, SPLITTER_VERSION, indexed_text
from sealgraph.text.lexicon import Lexicon, get_lexicon, lexicon_spec, use_lexicon
from sealgraph.text.lines import document_line_hashes
from sealgraph.text.statistics import chunk_names
from sealgraph.types import Document

__all__ = ["LEASE_S", "build_qdrant", "refresh_qdrant", "remove_qdrant"]

LEASE_S = 300.0
"""Seconds a write lease lasts unless its writer renews it (it does as it writes)."""
_RENEW_S = 30.0
_ID_BATCH = 1000


@dataclass
class _Stored:
    """What the committed generation holds, as a write needs it."""

    generation: int
    manifest: dict[str, Any] | None
    documents: dict[str, dict[str, Any]] = field(default_factory=dict)
    """Payload of each document point, by id, in document order."""


class _Writer:
    """A write to one collection: its lease, generation and the points it adds."""

    def __init__(self, collection: Collection, head: dict[str, Any]) -> None:
        self.collection = collection
        self.lease = str(uuid.uuid4())
        self.base = int(head["generation"])
        self.generation = self.base + 1
        self._renewed = 0.0

    def renew(self, *, force: bool = False) -> None:
        """Renew the lease (at most every :data:`_RENEW_S`), refusing if it was taken."""
        now = time.time()
        if not force and now - self._renewed < _RENEW_S:
            return
        head = self._own_head()
        head["writing"] = {"id": self.lease, "since": now}
        self.collection.put_head(head)
        self._renewed = now

    def _own_head(self) -> dict[str, Any]:
        head = self.collection.head() or {}
        writing = head.get("writing") or {}
        if writing.get("id") != self.lease or head.get("generation") != self.base:
            raise SealgraphError(
                f"another write to {self.collection.address} took over while this one ran "
                f"(its lease ran out: more than {LEASE_S:.0f} s without renewal); run it again"
            )
        return head

    def commit(self, manifest: dict[str, Any]) -> None:
        """Make this write's generation the one readers read, then delete what no reader reads."""
        from qdrant_client import models

        head = self._own_head()
        head.update(generation=self.generation, manifest=manifest, writing=None)
        self.collection.put_head(head)
        # The points the previous generation no longer held (a reader opened before
        # this write keeps its generation whole until the next write), and what an
        # abandoned write left.
        self.collection.delete(
            models.Filter(
                should=[
                    models.FieldCondition(key="died", range=models.Range(lte=self.base)),
                    models.FieldCondition(key="born", range=models.Range(gt=self.generation)),
                ]
            )
        )

    def abandon(self) -> None:
        """Undo what this write did to the collection (best effort) and give the lease back.

        Nothing is undone when another write has taken the lease over: that write
        undid what this one left when it took it, and what it wrote since is its own.
        """
        head = self.collection.head() or {}
        if (head.get("writing") or {}).get("id") != self.lease:
            return
        undo(self.collection, self.base)
        head["writing"] = None
        self.collection.put_head(head)


def undo(collection: Collection, base: int) -> None:
    """Undo an unfinished write over generation ``base``: its new points and its marks."""
    from qdrant_client import models

    collection.delete(
        models.Filter(must=[models.FieldCondition(key="born", range=models.Range(gt=base))])
    )
    collection.client.set_payload(
        collection.name,
        payload={"died": ALIVE},
        points=models.FilterSelector(
            filter=models.Filter(
                must=[models.FieldCondition(key="died", range=models.Range(gt=base, lt=ALIVE))]
            )
        ),
        wait=True,
    )


@contextmanager
def _writing(collection: Collection, lock_timeout: float) -> Iterator[_Writer]:
    """Hold the collection's write lease for the block (wait up to ``lock_timeout``)."""
    deadline = time.monotonic() + lock_timeout
    while True:
        head = collection.head()
        assert head is not None  # the caller created the collection
        writing = head.get("writing") or {}
        since = writing.get("since")
        if not isinstance(since, int | float) or time.time() - since > LEASE_S:
            break
        if time.monotonic() >= deadline:
            raise SealgraphError(
                f"another write to {collection.address} has been running since "
                f"{time.strftime('%H:%M:%S', time.localtime(since))} (waited {lock_timeout:.0f} s)"
            )
        time.sleep(min(1.0, max(0.0, deadline - time.monotonic())))
    if writing:  # a writer that stopped renewing died: undo what it left
        undo(collection, int(head["generation"]))
    writer = _Writer(collection, head)
    head["writing"] = {"id": writer.lease, "since": time.time()}
    collection.put_head(head)
    try:
        yield writer
    except BaseException:
        writer.abandon()
        raise


def _stored(collection: Collection, head: dict[str, Any]) -> _Stored:
    generation = int(head["generation"])
    manifest = head.get("manifest") if isinstance(head.get("manifest"), dict) else None
    stored = _Stored(generation, manifest)
    if manifest is not None:
        flt = live_filter(generation, match("kind", "document"))
        for point in collection.scroll(flt, order_by="position"):
            stored.documents[point.payload["doc_id"]] = point.payload
    return stored


def build_qdrant(
    inputs: Any,
    address: QdrantAddress,
    *,
    replace: bool,
    lock_timeout: float,
    progress: ProgressFn | None,
    **settings: Any,
) -> Any:
    """Build the index in a Qdrant collection, or add to it; return it opened.

    As :func:`sealgraph.index.build_index` (``settings`` are the rest of its
    arguments, as :func:`~sealgraph.index._plan.plan_documents` takes them),
    except that vectors of another embedder need another collection (a
    collection's vector size is fixed): ``force`` with another embedder is refused.
    """
    warn = settings["warn"] = settings.get("warn") or warn_stderr
    force, prune = bool(settings.get("force")), bool(settings.get("prune"))
    collection = Collection(connect(address), address)
    head = collection.head()  # refuses a collection sealgraph did not make
    existing = head.get("manifest") if head is not None else None
    plan = plan_documents(inputs, existing, where=address, **settings)
    _check_embedder(address, existing, plan.embedder)
    if existing is not None and not (replace or force):
        _check_settings(address, existing, plan)
    if head is None or existing is None:  # new, or a first build that never committed
        if head is not None:
            collection.client.delete_collection(address.collection)
        collection.create(plan.embedder.dim if plan.embedder is not None else None)
    report = progress or _StderrProgress()
    with _writing(collection, lock_timeout) as writer, use_lexicon(plan.lex):
        head = collection.head() or {}
        stored = _stored(collection, head)
        _add(writer, stored, plan, report, warn, replace=replace or force, prune=prune)
    return _open(address, plan.embedder, warn)


def _open(address: QdrantAddress, embedder: Embedder | None, warn: WarnFn) -> Any:
    from sealgraph.index.qdrant._index import open_qdrant_index

    return open_qdrant_index(
        address, embedder=embedder if embedder is not None else "none", warn=warn
    )


def _check_embedder(
    address: QdrantAddress, existing: dict[str, Any] | None, resolved: Embedder | None
) -> None:
    # plan_documents checks an add; with force, the collection's fixed vector size
    # still forbids another embedder.
    if existing is None:
        return
    old = embedder_name(existing)  # a manifest point may hold anything: read as _plan does
    new = resolved.name if resolved is not None else None
    if old != new:
        raise EmbedderMismatchError(
            f"the index at {address} was built with embedder {old or 'none'} but "
            f"{new or 'none'} was requested; vectors of different embedders cannot be "
            f"mixed, and a Qdrant collection's vector size is fixed: build into another "
            f"collection"
        )


def _check_settings(address: QdrantAddress, existing: dict[str, Any], plan: _BuildPlan) -> None:
    """Refuse an add whose chunks or tokens would not be made as the index's are.

    A folder index re-chunks every document then; a collection would mix two kinds
    of chunks or tokens, so the add is refused and ``--replace`` suggested.
    """
    chunker = existing.get("chunker") or {}
    lexical = existing.get("lexical") or {}
    differ = [
        what
        for what, old, new in (
            ("chunk size", chunker.get("max_tokens"), plan.max_chunk_tokens),
            ("chunker", chunker.get("splitter_version"), SPLITTER_VERSION),
            (
                "token encoding",
                (existing.get("tokenizer") or {}).get("encoding"),
                plan.encoding_name,
            ),
            ("lexical tokenizer", lexical.get("tokenizer_version"), plan.lex.tokenizer_version),
        )
        if old != new
    ]
    if differ:
        raise InputError(
            f"the index at {address} was built with another {' and '.join(differ)}; adding "
            f"would mix two kinds of chunks: index all of its documents again with --replace "
            f"(replace=True), or refresh its lexical part with `sealgraph index --index {address}`"
        )


@dataclass
class _Change:
    """What a write does to the documents: which go, which come, where they sit."""

    retired: set[str]
    positions: dict[str, int]
    counts: dict[str, int]


def _change(
    stored: _Stored, plan: _BuildPlan, warn: WarnFn, *, replace: bool, prune: bool
) -> _Change:
    given_ids = [d.doc_id for d in plan.given]
    old = stored.documents
    stale = [
        doc_id
        for doc_id, payload in old.items()
        if doc_id not in set(given_ids)
        and plan.scope is not None
        and plan.scope.gone(payload.get("file"))
    ]
    if stale and not prune and not replace:
        files = {d: p["file"] for d, p in old.items() if p.get("file")}
        warn(stale_message([Document(d, "", "") for d in stale], files, plan.scope))
    if replace:
        retired = set(old)
        positions = {doc_id: i for i, doc_id in enumerate(given_ids)}
    else:
        retired = (set(given_ids) & set(old)) | (set(stale) if prune else set())
        nxt = max((int(p["position"]) for p in old.values()), default=-1) + 1
        positions = {}
        for doc_id in given_ids:
            if doc_id in old:
                positions[doc_id] = int(old[doc_id]["position"])
            else:
                positions[doc_id], nxt = nxt, nxt + 1
    updated = len(set(given_ids) & set(old)) if not replace else 0
    counts = {
        "added": len(given_ids) - updated,
        "updated": updated,
        "kept": len(set(old) - retired),
        "removed": len(retired - set(given_ids)) if not replace else len(set(old) - set(given_ids)),
    }
    return _Change(retired, positions, counts)


@dataclass
class _Retired:
    """The chunks of the documents a write replaces or removes: lengths, and vectors to reuse."""

    length: int = 0
    n_chunks: int = 0
    vectors: dict[str, np.ndarray] = field(default_factory=dict)
    """Stored vectors by content hash (when asked for)."""


def _read_retired(
    collection: Collection, generation: int, doc_ids: set[str], *, vectors: bool
) -> _Retired:
    retired = _Retired()
    ids = sorted(doc_ids)
    for start in range(0, len(ids), _ID_BATCH):
        flt = live_filter(
            generation, match("kind", "chunk"), match_any("doc_id", ids[start : start + _ID_BATCH])
        )
        for point in collection.scroll(
            flt, payload=["dl", "hash"], vectors=[DENSE] if vectors else False
        ):
            retired.length += int(point.payload["dl"])
            retired.n_chunks += 1
            if vectors and point.vector:
                retired.vectors[point.payload["hash"]] = np.asarray(
                    point.vector[DENSE], dtype=np.float32
                )
    return retired


def _lexical_after(
    manifest: dict[str, Any] | None, lex: Lexicon, added: Sequence[int], retired: _Retired
) -> tuple[dict[str, Any], int, bool]:
    """Return the manifest's new ``lexical`` entry, the new chunk count, and whether to re-weight.

    The total lexical length and the chunk count are kept exactly; the mean length
    the stored weights were made with changes only when it drifted too far.
    """
    lexical = _lexical_state(manifest, lex)
    lexical["total_length"] += sum(added) - retired.length
    n_chunks = int((manifest or {}).get("counts", {}).get("chunks", 0)) - retired.n_chunks
    n_chunks += len(added)
    avgdl = lexical["total_length"] / max(1, n_chunks)
    reweight = needs_reweighting(lexical["weighted_avgdl"], avgdl)
    if reweight:
        lexical["weighted_avgdl"] = avgdl
    return lexical, n_chunks, reweight


@dataclass(frozen=True)
class _Chunked:
    """The given documents chunked: chunks, their lexical tokens and content hashes."""

    chunks: list[Any]
    tokens: list[list[str]]
    hashes: list[str]

    @classmethod
    def of(cls, plan: _BuildPlan) -> _Chunked:
        chunked = cls([], [], [])
        for batch in process_documents(
            plan.given,
            lex=plan.lex,
            counter=plan.counter,
            max_tokens=plan.max_chunk_tokens,
            tokenize=tokenizer(plan.lex),
            workers=build_workers(len(plan.given)),
        ):
            chunked.chunks.extend(batch.chunks)
            chunked.tokens.extend(batch.tokens)
            chunked.hashes.extend(batch.hashes)
        return chunked


def _add(
    writer: _Writer,
    stored: _Stored,
    plan: _BuildPlan,
    report: ProgressFn,
    warn: WarnFn,
    *,
    replace: bool,
    prune: bool,
) -> None:
    collection = writer.collection
    change = _change(stored, plan, warn, replace=replace, prune=prune)
    chunked = _Chunked.of(plan)
    if not chunked.chunks and not (set(stored.documents) - change.retired):
        raise InputError("nothing to index: every document is empty")
    dense = plan.embedder is not None
    retired = _read_retired(collection, stored.generation, change.retired, vectors=dense)
    vectors: Any = None
    n_reused = 0
    if plan.embedder is not None and chunked.chunks:
        texts = [indexed_text(c) for c in chunked.chunks]
        vectors, n_reused, _, _ = embed_chunks(
            plan.embedder, texts, chunked.hashes, retired.vectors, report
        )
    lexical, n_chunks, reweight = _lexical_after(
        stored.manifest, plan.lex, [len(t) for t in chunked.tokens], retired
    )
    collection.upsert(_new_points(writer, plan, change, chunked, vectors, lexical))
    _mark_dead(collection, stored.generation, change.retired, writer.generation)
    if reweight:
        reweight_chunks(writer, stored.generation, plan.lex, lexical, report)
    old_files = {d: p["file"] for d, p in stored.documents.items() if p.get("file")}
    files = {**{d: f for d, f in old_files.items() if d not in change.retired}, **plan.given_files}
    sources = merge_sources(
        (stored.manifest or {}).get("sources") or [],
        plan.sources,
        replace=replace,
        drop=pruned_source(plan.scope, files, prune),
    )
    counts = {
        "documents": len(set(stored.documents) - change.retired) + len(plan.given),
        "chunks": n_chunks,
        "vectors_reused": n_reused,
        "vectors_new": len(chunked.chunks) - n_reused if dense else 0,
        **document_counts(change.counts),
    }
    writer.commit(_manifest(plan, lexical, counts, sources))


def _new_points(
    writer: _Writer,
    plan: _BuildPlan,
    change: _Change,
    chunked: _Chunked,
    vectors: Any,
    lexical: dict[str, Any],
) -> Iterator[Any]:
    """Yield the points of the given documents and their chunks, renewing the lease."""
    by_doc: dict[str, list[str]] = {}
    for chunk in chunked.chunks:
        by_doc.setdefault(chunk.doc_id, []).append(chunk.text)
    for doc in plan.given:
        texts = by_doc.get(doc.doc_id, [])
        yield document_point(
            doc,
            position=change.positions[doc.doc_id],
            file=plan.given_files.get(doc.doc_id),
            n_chunks=len(texts),
            generation=writer.generation,
            lines=document_line_hashes(texts),
        )
    for i, chunk in enumerate(chunked.chunks):
        writer.renew()
        yield chunk_point(
            chunk,
            tokens=chunked.tokens[i],
            avgdl=lexical["weighted_avgdl"],
            vector=vectors[i] if vectors is not None else None,
            content_hash=chunked.hashes[i],
            position=change.positions[chunk.doc_id],
            generation=writer.generation,
            lex=plan.lex,
            names=sorted(chunk_names(chunk.text)),
        )


def _mark_dead(collection: Collection, base: int, doc_ids: set[str], generation: int) -> None:
    ids = sorted(doc_ids)
    for start in range(0, len(ids), _ID_BATCH):
        collection.set_died(
            live_filter(base, match_any("doc_id", ids[start : start + _ID_BATCH])), generation
        )


def _lexical_state(manifest: dict[str, Any] | None, lex: Lexicon) -> dict[str, Any]:
    entry = dict((manifest or {}).get("lexical") or {})
    return {
        "tokenizer_version": lex.tokenizer_version,
        "field_weight": int(entry.get("field_weight", FIELD_WEIGHT)),
        **BM25_PARAMS,
        "total_length": int(entry.get("total_length", 0)),
        "weighted_avgdl": float(entry.get("weighted_avgdl", 0.0)),
    }


def reweight_chunks(
    writer: _Writer, base: int, lex: Lexicon, lexical: dict[str, Any], report: ProgressFn
) -> None:
    """Write the chunks kept from ``base`` again, their sparse vectors made with the new mean length.

    Tokens are made again from each chunk's stored text (with ``lex`` and the
    index's field weight); the dense vector is copied, nothing is embedded. The
    copies belong to the write's generation and the originals die with it, so a
    reader sees either every old weight or every new one, and a write that fails
    undoes this too.
    """
    from qdrant_client import models

    tokenize = tokenizer(lex)
    live = live_filter(base, match("kind", "chunk"))
    kept = models.FieldCondition(key="died", range=models.Range(gt=writer.generation))

    def copies() -> Iterator[Any]:
        points = writer.collection.scroll(models.Filter(must=[live, kept]), vectors=[DENSE])
        for done, point in enumerate(points, start=1):
            chunk = chunk_from_payload(point.payload)
            writer.renew()
            if done % 1000 == 0:
                report("re-weighting", done, 0)
            yield chunk_point(
                chunk,
                tokens=chunk_tokens(chunk, tokenize, lexical["field_weight"]),
                avgdl=lexical["weighted_avgdl"],
                vector=(point.vector or {}).get(DENSE),
                content_hash=point.payload["hash"],
                position=int(point.payload["seq"]) // SEQ_STRIDE,
                generation=writer.generation,
                lex=lex,
                names=sorted(chunk_names(chunk.text)),
            )

    # The copies are born after ``base``: the scroll's filter never sees them.
    with use_lexicon(lex):  # the names are the index's lexicon's
        writer.collection.upsert(copies())
    writer.collection.set_died(live, writer.generation)


def _manifest(
    plan: _BuildPlan, lexical: dict[str, Any], counts: dict[str, int], sources: list[dict[str, Any]]
) -> dict[str, Any]:
    embedder = plan.embedder
    info = (
        {
            "name": embedder.name,
            "dim": int(embedder.dim),
            **getattr(embedder, "manifest_fields", {}),
        }
        if embedder is not None
        else None
    )
    return {
        "sealgraph_version": sealgraph_version(),
        "embedder": info,
        "tokenizer": {"encoding": plan.encoding_name},
        "chunker": {"max_tokens": plan.max_chunk_tokens, "splitter_version": SPLITTER_VERSION},
        "lexicon": lexicon_spec(plan.lex),
        "lexical": lexical,
        "statistics": statistics_entry(plan.lex),
        "counts": counts,
        "sources": sources,
    }


@contextmanager
def _rewriting(
    address: QdrantAddress, lock_timeout: float, what: str
) -> Iterator[tuple[_Writer, _Stored, dict[str, Any], Lexicon]]:
    """Hold the write lease of an existing index; give its state, manifest and lexicon."""
    collection = Collection(connect(address), address)
    head = collection.head()
    if head is None or not isinstance(head.get("manifest"), dict):
        raise InputError(f"no index at {address} to {what}")
    with _writing(collection, lock_timeout) as writer:
        stored = _stored(collection, collection.head() or {})
        manifest = dict(stored.manifest or {})
        yield writer, stored, manifest, get_lexicon(manifest_lexicon(manifest))


def remove_qdrant(
    address: QdrantAddress,
    targets: Sequence[str],
    *,
    embedder: str | Embedder | Any | None,
    lock_timeout: float,
    warn: WarnFn | None,
) -> Any:
    """Remove documents (by file, folder or id) from a Qdrant index; return it opened."""
    from sealgraph.index.qdrant._index import open_qdrant_index

    warn = warn or warn_stderr
    with _rewriting(address, lock_timeout, "remove documents from") as (
        writer,
        stored,
        manifest,
        lex,
    ):
        files = {d: p["file"] for d, p in stored.documents.items() if p.get("file")}
        docs = [Document(d, "", "") for d in stored.documents]
        removed = documents_to_remove(address, list(targets), docs, files)
        retired = _read_retired(writer.collection, stored.generation, removed, vectors=False)
        _mark_dead(writer.collection, stored.generation, removed, writer.generation)
        lexical, n_chunks, reweight = _lexical_after(manifest, lex, [], retired)
        if reweight:
            reweight_chunks(writer, stored.generation, lex, lexical, _StderrProgress())
        still = {f for d, f in files.items() if d not in removed}
        gone = {files[d] for d in removed if d in files}
        sources = [
            s
            for s in manifest.get("sources") or []
            if s.get("path") in still
            or not (s.get("path") in gone or covered(str(s.get("path")), list(targets)))
        ]
        kept = len(stored.documents) - len(removed)
        manifest.update(
            sealgraph_version=sealgraph_version(),
            lexical=lexical,
            sources=sources,
            counts={
                "documents": kept,
                "chunks": n_chunks,
                "vectors_reused": n_chunks if manifest.get("embedder") else 0,
                "vectors_new": 0,
                **document_counts(
                    {"added": 0, "updated": 0, "kept": kept, "removed": len(removed)}
                ),
            },
        )
        writer.commit(manifest)
    return open_qdrant_index(address, embedder=embedder, warn=warn)


def refresh_qdrant(
    address: QdrantAddress,
    *,
    embedder: str | Embedder | Any | None,
    lock_timeout: float,
    warn: WarnFn | None,
) -> Any:
    """Re-tokenize and re-weight every chunk of a Qdrant index (nothing is embedded)."""
    from sealgraph.index.qdrant._index import open_qdrant_index

    warn = warn or warn_stderr
    with _rewriting(address, lock_timeout, "refresh") as (writer, stored, manifest, lex):
        lexical = _lexical_state(manifest, lex)
        tokenize = tokenizer(lex)
        total = 0
        flt = live_filter(stored.generation, match("kind", "chunk"))
        for point in writer.collection.scroll(flt):
            chunk = chunk_from_payload(point.payload)
            total += len(chunk_tokens(chunk, tokenize, lexical["field_weight"]))
        lexical["total_length"] = total
        lexical["weighted_avgdl"] = total / max(1, int(manifest["counts"]["chunks"]))
        reweight_chunks(writer, stored.generation, lex, lexical, _StderrProgress())
        manifest.update(
            sealgraph_version=sealgraph_version(),
            lexical=lexical,
            statistics=statistics_entry(lex),
        )
        writer.commit(manifest)
    return open_qdrant_index(address, embedder=embedder, warn=warn)
