"""The HTML page of a run: what it shows, that it escapes everything, its size (hand-made runs)."""

import html
import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sealgraph.errors import InputError
from sealgraph.graph.events import make_event
from sealgraph.runs.page import PAGE_CSP, render_run_page, run_section, write_run_page

WEIGHTS = {"gap_coverage": 1.0, "corroboration": 0.4, "novelty": 0.0, "redundancy": 0.1}
CONFIG = {"k": 2, "max_loops": 3, "epsilon": 0.02, "dwell": 1, "budget": 800, "utility": WEIGHTS}


def score(chunk_id, total, gap=0.0):
    return {
        "chunk_id": chunk_id,
        "gap_coverage": gap,
        "corroboration": 0.5,
        "novelty": 0.25,
        "redundancy": 0.1,
        "total": total,
    }


def make_run(
    *, k=2, loops=1, candidates=3, queries=1, text="Orbit is led by Ada.", title="Orbit", doc="doc"
):
    """A run of ``loops`` repair loops over a k-slot set: one swap and one refusal per loop."""
    slots = [f"{doc}{i}.md#0" for i in range(k)]
    events = [
        make_event(
            "search",
            "needs",
            "answer type person",
            {
                "question": "Who leads Orbit?",
                "entities": [{"name": title, "targets": ["orbit.md"]}],
                "relation_terms": ["leads"],
                "answer_type": "person",
                "structure": "bridge",
                "hops": 2,
            },
            step=1,
        ),
        make_event(
            "search",
            "retrieved",
            f"initial top-{k}: " + ", ".join(slots),
            {"hits": [{"chunk_id": c, "score": 1.0, "rank": r} for r, c in enumerate(slots)]},
            step=1,
        ),
    ]
    step = 2
    for loop in range(1, loops + 1):
        events.append(
            make_event(
                "assess",
                "gap",
                "missing_relation: who leads Orbit",
                {"kind": "missing_relation", "reason": f"nothing says who leads {title}"},
                step=step,
                loop=loop - 1,
            )
        )
        found = [f"{doc}cand{loop}-{i}.md#0" for i in range(candidates)]
        for q in range(queries):
            events.append(
                make_event(
                    "micro_query",
                    "micro_query",
                    f"'{title} leads' (missing_relation) -> {candidates} candidate(s)",
                    {
                        "text": f"{title} leads {q}",
                        "gap_kind": "missing_relation",
                        "candidates": found,
                    },
                    step=step + 1,
                    loop=loop,
                )
            )
        victim, winner = slots[-1], found[0]
        events += [
            make_event(
                "replace",
                "candidates",
                f"{candidates} candidate(s) scored",
                {
                    "scores": [score(c, 0.5 - i / 100) for i, c in enumerate(found)],
                    "incumbents": [score(c, 0.3) for c in slots],
                },
                step=step + 2,
                loop=loop,
            ),
            make_event(
                "replace",
                "swap",
                f"swap {victim} -> {winner}: S(c*)=0.500 > S(victim)=0.300 + ε=0.02",
                {
                    "candidate": winner,
                    "victim": victim,
                    "reason": "S(c*)=0.500 > S(victim)=0.300 + ε=0.02",
                    "candidate_score": score(winner, 0.5, gap=0.4),
                    "victim_score": score(victim, 0.3),
                },
                step=step + 2,
                loop=loop,
            ),
            make_event(
                "replace",
                "refuse",
                "refuse",
                {
                    "candidate": found[-1],
                    "victim": slots[0],
                    "reason": "do no harm: the candidate closes no gap the victim does not",
                    "candidate_score": score(found[-1], 0.4),
                    "victim_score": score(slots[0], 0.35),
                },
                step=step + 2,
                loop=loop,
            ),
        ]
        slots = [*slots[:-1], winner]
        step += 3
    spans = [
        {
            "n": i + 1,
            "span_id": f"{c}:0",
            "doc_id": c.split("#")[0],
            "start": 10 * i,
            "end": 10 * i + 9,
        }
        for i, c in enumerate(slots)
    ]
    decisions = [
        {
            "span_id": s["span_id"],
            "doc_id": s["doc_id"],
            "chunk_ids": [slots[i]],
            "section": "People",
            "tokens": 40,
            "decision": "selected",
            "reason": "admitted: 40 tokens",
        }
        for i, s in enumerate(spans)
    ] + [
        {
            "span_id": "doc9.md#0:3",
            "doc_id": "doc9.md",
            "chunk_ids": ["doc9.md#0"],
            "section": "",
            "tokens": 900,
            "decision": "budget_exceeded",
            "reason": "needs 900 tokens, 400 left",
        }
    ]
    events += [
        make_event(
            "pack",
            "pack",
            f"{k} of {k + 1} span(s) packed",
            {
                "budget": 800,
                "tokens": 40 * k,
                "strategy": "auto",
                "decisions": decisions,
                "spans": spans,
            },
            step=step,
            loop=loops,
        ),
        make_event("generate", "answer", "Ada [1]", {"cited": [1]}, step=step + 1, loop=loops),
    ]
    evidence = [
        {
            "chunk_id": c,
            "doc_id": c.split("#")[0],
            "title": title,
            "section": ["People"],
            "text": text,
            "inserted_loop": 0,
        }
        for c in slots
    ]
    citations = [
        {
            "n": 1,
            "chunk_id": slots[0],
            "chunk_ids": [slots[0]],
            "doc_id": "doc0.md",
            "title": title,
            "text": text,
        }
    ]
    return {
        "question": f"Who leads {title}?",
        "answer": "Ada [1]",
        "short_answer": "Ada",
        "declined": False,
        "answerability": 0.8,
        "missing": "",
        "citations": citations,
        "evidence": evidence,
        "slots": [{"chunk_id": c, "inserted_loop": 0} for c in slots],
        "seal_log": events,
    }


SHOWN = (
    # slots: the swapped-in passage framed, with the victim it replaced
    'class="slot in" data-chunk="doccand1-0.md#0" data-loop="1"',
    '<s class="cid">doc1.md#0</s>',
    # the swap with the S(c) terms of winner and victim, the refusal with its reason
    'class="swap swap" data-candidate="doccand1-0.md#0" data-victim="doc1.md#0"',
    "S(c*) − S(victim) = +0.200; ε = 0.02",
    '<span class="badge warn">do-no-harm</span>',
    "S(c) = 1·GapCov + 0.4·Corr + 0·Nov − 0.1·Red",
    # gaps, micro-queries, packing (budget bar, kept with offsets, dropped with reason)
    "nothing says who leads Orbit",
    '<tr class="micro-query">',
    '<div class="bar"',
    "doc0.md [0:9]",
    "needs 900 tokens, 400 left",
    # the answer's [1] links to its citation
    '<a class="cite" href="#cite-1">[1]</a>',
    'id="cite-1"',
    "thread: <b>t1</b>",
)


def test_the_page_shows_slots_swaps_refusals_packing_and_linked_citations():
    page = render_run_page(make_run(), config=CONFIG, facts={"thread": "t1"})
    assert page.startswith("<!DOCTYPE html>")
    assert f'content="{PAGE_CSP}"' in page
    assert page.count('<tr class="loop">') == 2  # a row per loop
    missing = [fragment for fragment in SHOWN if fragment not in page]
    assert not missing
    # a citation links to the text of its chunk
    assert re.search(r'<section class="chunk" id="chunk-doc0-md-0-[0-9a-f]{6}"', page)


def test_the_page_loads_nothing_and_runs_no_script():
    page = render_run_page(make_run())
    assert "<script" not in page
    assert "http://" not in page and "https://" not in page
    assert "default-src 'none'" in PAGE_CSP and "script-src" not in PAGE_CSP


def test_document_text_is_escaped():
    hostile = "<script>document.title='pwned'</script><img src=x onerror=alert(1)> & \"q\""
    page = render_run_page(make_run(text=hostile, title="<i>Orbit</i> &lt;script&gt;"))
    assert "<script" not in page and "<img" not in page and "<i>" not in page
    assert html.escape(hostile) in page


def tags(page):
    # <bdi> isolates right-to-left text: the one element a text may bring.
    return sorted(t for t in re.findall(r"<([A-Za-z][A-Za-z0-9]*)", page) if t != "bdi")


@settings(max_examples=40, deadline=None)
@given(st.text(max_size=80))
def test_no_text_adds_markup(text):
    # Whatever a corpus holds, the page's elements are those of a harmless text.
    plain = render_run_page(make_run(text="x", title="x", doc="x"))
    page = render_run_page(make_run(text="x" + text, title="x" + text, doc="x" + text))
    assert tags(page) == tags(plain)


def test_the_same_run_gives_the_same_bytes(tmp_path):
    run = make_run(loops=2)
    first = write_run_page(tmp_path / "a.html", run, config=CONFIG).read_bytes()
    second = write_run_page(tmp_path / "b.html", run, config=CONFIG).read_bytes()
    assert first == second
    assert not list(tmp_path.glob(".*tmp"))  # written atomically, nothing left behind


def test_a_k5_three_loop_run_stays_under_one_megabyte():
    run = make_run(k=5, loops=3, candidates=40, queries=5, text="Orbit is led by Ada. " * 100)
    page = render_run_page(run, config={**CONFIG, "k": 5})
    assert page.count('<tr class="loop">') == 4
    assert len(page.encode("utf-8")) < 1_000_000


def test_a_run_stopped_before_generate_and_without_loops_renders():
    run = make_run()
    partial = {
        "question": run["question"],
        "seal_log": [e for e in run["seal_log"] if e["node"] == "search"],
    }
    page = render_run_page(partial)
    assert "stopped before generate" in page and "No repair loop ran." in page


def test_sections_of_several_runs_keep_their_ids_apart():
    a = run_section(make_run(), prefix="a-")
    b = run_section(make_run(), prefix="b-")
    ids = re.findall(r'id="([^"]+)"', a + b)
    assert len(ids) == len(set(ids))
    assert 'href="#a-cite-1"' in a


def test_a_page_that_cannot_be_written_is_a_clear_error(tmp_path):
    with pytest.raises(InputError, match="does not exist"):
        write_run_page(tmp_path / "missing" / "run.html", make_run())
    with pytest.raises(InputError, match="is a folder"):
        write_run_page(tmp_path, make_run())
    assert list(tmp_path.iterdir()) == []


def test_later_loops_show_the_blocklist_and_finds_that_entered():
    page = render_run_page(make_run(loops=2, candidates=10), config=CONFIG)
    loop2 = page[page.index('id="loop-2"') :]
    blocklist = loop2[loop2.index('<div class="blocklist">') :]
    assert blocklist.index("doc1.md#0") < blocklist.index("</div>")  # evicted in loop 1
    assert '<span class="cid">doccand1-0.md#0</span> <span class="badge in">in</span>' in page
    assert "+4 more" in page  # 10 finds: the first 6 shown


def test_a_run_recorded_before_offsets_says_so():
    run = make_run()
    for event in run["seal_log"]:
        if event["kind"] == "pack":
            del event["data"]["spans"]
    page = render_run_page(run)
    assert "offsets not recorded" in page and "doc0.md [0:9]" not in page


def test_llm_fallbacks_are_listed_with_their_reason():
    run = make_run()
    run["seal_log"].insert(
        2,
        make_event(
            "search",
            "llm_fallback",
            "needs: fell back (timeout)",
            {"step": "needs", "reason": "timeout after 30 s <b>"},
            step=1,
        ),
    )
    page = render_run_page(run)
    assert '<li class="llm-note">' in page and "timeout after 30 s &lt;b&gt;" in page


def test_titles_are_shown_as_a_person_reads_them():
    # A passage's title as a heading anchor writes it; the question's own words stay as asked.
    page = render_run_page(make_run(title="Request Files { #request-files }"))
    assert '<span class="ctitle">Request Files</span>' in page
    assert "<b>Request Files</b> " in page  # the citation and the chunk's text
    assert 'class="ctitle">Request Files {' not in page and "<b>Request Files {" not in page
