"""Corpus counts: how many chunks write each proper name, added and taken back."""

from __future__ import annotations

from sealgraph.text.statistics import CorpusCounts, chunk_names, statistics_fingerprint

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
