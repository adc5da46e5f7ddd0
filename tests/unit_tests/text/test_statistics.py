"""Corpus counts: how many chunks write each proper name, added and taken back."""

from __future__ import annotations

import hashlib
import json

from sealgraph.text.statistics import (
    STATISTICS_VERSION,
    CorpusCounts,
    chunk_names,
    statistics_fingerprint,
)

TEXTS = [
    "Ada Quill met Bo Ray in Paris. Ada Quill again.",
    "Bo Ray painted harbours near Paris.",
    "Cy Dee stayed home.",
]


def test_a_name_counts_once_per_chunk_that_writes_it_rare_ones_too():
    counts = CorpusCounts()
    counts.add(TEXTS)
    assert counts.n_chunks == 3
    assert counts.names == {"ada quill": 1, "bo ray": 2, "cy dee": 1}
    assert chunk_names("Cy Dee stayed home.") == {"cy dee"}


def test_subtracting_what_was_added_leaves_the_counts_of_the_rest():
    counts = CorpusCounts()
    counts.add(TEXTS)
    counts.subtract(TEXTS[:1])
    fresh = CorpusCounts()
    fresh.add(TEXTS[1:])
    assert (counts.n_chunks, counts.names) == (fresh.n_chunks, fresh.names)
    assert "ada quill" not in counts.names  # no zero entries left behind


def test_merging_counts_of_two_parts_equals_counting_the_whole():
    whole, first, second = CorpusCounts(), CorpusCounts(), CorpusCounts()
    whole.add(TEXTS)
    first.add(TEXTS[:2])
    second.add(TEXTS[2:])
    first.merge(second)
    assert (first.n_chunks, first.names) == (whole.n_chunks, whole.names)


def test_the_fingerprint_is_a_stable_digest():
    assert statistics_fingerprint() == statistics_fingerprint()
    assert len(statistics_fingerprint()) == 64


GOLDEN_TEXTS = [
    "Ada Brightwater and Tomas Greyhill met the Duke of the Isles in Port Ellis.",
    "In 1921 The Salt and Iron Company hired O'Brien; d'Artagnan's sword hung in Renée Zoë's hall.",
    "His brother, Jean-Luc Picard, said: “The United States of America”.",
    "Bo Ray  Cy Dee (Harbour Works) — Lisbon Port's director, Ines Varga.",
]


GOLDEN_TITLES = [
    ("Payments Platform Team", "The Payments Platform Team (PPT), also known as Paybox, runs it."),
    ("Apple Inc.", "Apple Inc. makes computers."),
    ("Concord, California", "Concord is a city."),
    ("Harbourlight (album)", "Harbourlight is an album, usually just called Light."),
    ("Ada Brightwater", "Ada Brightwater was a painter."),
    ("CopAcc_NDA-and-ToP-Mentors_2.0_2017", "This agreement is made between the parties."),
    ("EFCAConfidentialityAgreement", "Confidential."),
]


def golden_digest() -> str:
    """Digest of what an index stores of fixed texts: names counted, each document's names.

    The example corpus and the lines above: the proper-name counts of the texts and
    the gazetteer's ranked names (:func:`sealgraph.text.aliases.document_names`) and
    title words of each document.
    """
    from pathlib import Path

    import sealgraph
    from sealgraph.text.aliases import document_names, title_words

    corpus = Path(sealgraph.__file__).parent / "examples" / "corpus"
    files = sorted(corpus.glob("*.md"))
    texts = [p.read_text(encoding="utf-8") for p in files] + GOLDEN_TEXTS
    counts = CorpusCounts()
    counts.add(texts)
    documents = [(p.stem.replace("-", " ").title(), p.read_text(encoding="utf-8")) for p in files]
    names = [
        (
            sorted(document_names(title, text, [title.upper(), "Overview"]).items()),
            title_words(title),
        )
        for title, text in [*documents, *GOLDEN_TITLES]
    ]
    payload = json.dumps([sorted(counts.names.items()), names], ensure_ascii=False).encode()
    return hashlib.sha256(payload).hexdigest()


# Change both together: a change of what the counts hold must change the version, so
# that indexes counted before are recounted (they are read, not counted, otherwise).
GOLDEN = (4, "12b6fe876e372ec1b91e95fdc50a8695683fd0ba07440964ca4042419a176899")


def test_the_counts_of_fixed_texts_change_only_with_the_version():
    assert (STATISTICS_VERSION, golden_digest()) == GOLDEN, (
        "proper-name counts changed: bump STATISTICS_VERSION in sealgraph/text/statistics.py "
        "and record the new digest here"
    )
