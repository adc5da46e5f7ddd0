"""Entity ledger: de-duplicating merges, alias resolution, provenance, eviction, round trip."""

from __future__ import annotations

import json

from sealgraph.ledger.extract import extract_facts, passage_features
from sealgraph.ledger.gazetteer import Gazetteer
from sealgraph.ledger.ledger import EntityLedger, Facts, Provenance, Qualifier, Relation
from sealgraph.types import Chunk


def mention(key, name, docs=(), chunk="c#0", sentence=0, conf=1.0):
    return (key, name, tuple(docs), Provenance(chunk, sentence), conf)


def facts(*entities, relations=(), qualifiers=(), chunks=()):
    return Facts(tuple(entities), tuple(relations), tuple(qualifiers), tuple(chunks))


def chunk(chunk_id: str, doc_id: str, title: str, text: str) -> Chunk:
    return Chunk(chunk_id, doc_id, title, (), 0, 0, len(text), text, len(text.split()))


def test_merge_is_immutable():
    empty = EntityLedger()
    merged = empty.merge(facts(mention("ppt team", "PPT team")))
    assert empty.entities == {} and empty.alias_map == {}
    assert list(merged.entities) == ["ppt team"]


def test_same_key_across_loops_is_one_entity():
    ledger = EntityLedger()
    for loop in range(3):
        ledger = ledger.merge(
            facts(
                mention("payments platform team", "Payments Platform Team", ["ppt"], f"c#{loop}"),
                chunks=[f"c#{loop}"],
            )
        )
    assert list(ledger.entities) == ["payments platform team"]
    ent = ledger.entities["payments platform team"]
    assert [p.chunk_id for p in ent.provenance] == ["c#0", "c#1", "c#2"]
    assert ledger.chunk_ids == ("c#0", "c#1", "c#2")


def test_org_suffix_variant_resolves_to_the_same_entity():
    ledger = EntityLedger().merge(facts(mention("apple inc", "Apple Inc.", ["apple"])))
    ledger = ledger.merge(facts(mention("apple computer", "Apple Computer", [], "x#0", 2, 0.8)))
    ledger = ledger.merge(facts(mention("apple", "Apple", [], "x#1", 0, 0.8)))
    assert list(ledger.entities) == ["apple inc"]
    ent = ledger.entities["apple inc"]
    assert set(ent.aliases) == {"apple inc", "apple computer", "apple"}
    assert ledger.resolve("apple computer") == "apple inc"
    assert ledger.resolve("apple corporation") == "apple inc"  # suffix-stripped lookup


def test_acronym_resolves_to_the_same_entity():
    ledger = EntityLedger().merge(
        facts(mention("payments platform team", "Payments Platform Team", ["ppt"]))
    )
    ledger = ledger.merge(facts(mention("ppt", "PPT", [], "y#3", 1, 0.5)))
    assert list(ledger.entities) == ["payments platform team"]
    assert ledger.resolve("ppt") == "payments platform team"
    assert "ppt" in ledger.entities["payments platform team"].aliases


def test_shared_document_links_two_names():
    ledger = EntityLedger().merge(
        facts(mention("harbourlight", "Harbourlight (album)", ["harbourlight-album"]))
    )
    ledger = ledger.merge(
        facts(mention("harbourlight album", "Harbourlight album", ["harbourlight-album"], "z#0"))
    )
    assert list(ledger.entities) == ["harbourlight"]
    assert ledger.resolve("harbourlight album") == "harbourlight"
    assert ledger.has_doc("harbourlight-album")
    assert not ledger.has_doc("harbourlight-song")


def test_different_documents_stay_different_entities():
    ledger = EntityLedger().merge(
        facts(
            mention("harbourlight", "Harbourlight", ["harbourlight-album"]),
            mention("harbourlight song", "Harbourlight (song)", ["harbourlight-song"]),
        )
    )
    assert sorted(ledger.entities) == ["harbourlight", "harbourlight song"]


def test_provenance_accumulates_without_repeats_and_name_upgrades():
    ledger = EntityLedger().merge(facts(mention("ppt", "PPT", [], "a#0", 0, 0.5)))
    ledger = ledger.merge(facts(mention("ppt", "PPT", [], "a#0", 0, 0.5)))  # same place again
    ledger = ledger.merge(
        facts(mention("ppt", "Payments Platform Team", ["ppt-doc"], "b#0", 2, 1.0))
    )
    ent = ledger.entities["ppt"]
    assert ent.provenance == (Provenance("a#0", 0), Provenance("b#0", 2))
    assert ent.name == "Payments Platform Team"  # the longer, more confident form
    assert ent.confidence == 1.0
    assert ent.doc_ids == ("ppt-doc",)


def test_relations_and_qualifiers_resolve_and_deduplicate():
    base = EntityLedger().merge(
        facts(
            mention("payments platform team", "Payments Platform Team", ["ppt"]),
            mention("ledgerline", "Ledgerline", ["ledgerline"]),
        )
    )
    rel = Relation("ppt", "owns", "ledgerline", Provenance("c#1", 0), 0.9)
    qual = Qualifier("ppt", "number", "9", Provenance("c#1", 1))
    ledger = base.merge(facts(mention("ppt", "PPT", [], "c#1"), relations=[rel], qualifiers=[qual]))
    ledger = ledger.merge(facts(relations=[rel], qualifiers=[qual]))  # read again
    assert len(ledger.relations) == 1
    assert ledger.relations[0].subject == "payments platform team"
    assert ledger.relations[0].object == "ledgerline"
    assert [(q.entity, q.value) for q in ledger.qualifiers] == [("payments platform team", "9")]


def test_without_chunks_drops_facts_of_evicted_passages():
    rel = Relation("mira castellan", "directed", "lost in fogland", Provenance("lit#0", 0), 1.0)
    qual = Qualifier("mira castellan", "date", "1971", Provenance("sc#0", 0))
    ledger = EntityLedger().merge(
        facts(
            mention("lost in fogland", "Lost in Fogland", ["lit"], "lit#0"),
            mention("mira castellan", "Mira Castellan", ["sc"], "lit#0"),
            mention("mira castellan", "Mira Castellan", ["sc"], "sc#0"),
            relations=[rel],
            qualifiers=[qual],
            chunks=["lit#0", "sc#0"],
        )
    )
    after = ledger.without_chunks(["sc#0"])
    # Mira Castellan is still supported by lit#0; her date only by sc#0.
    assert sorted(after.entities) == ["lost in fogland", "mira castellan"]
    assert after.entities["mira castellan"].provenance == (Provenance("lit#0", 0),)
    assert after.qualifiers == ()
    assert after.relations == (rel,)
    assert after.chunk_ids == ("lit#0",)

    gone = ledger.without_chunks(["lit#0", "sc#0"])
    assert gone.entities == {} and gone.alias_map == {} and gone.relations == ()
    assert gone.resolve("mira castellan") is None
    # The original is untouched.
    assert len(ledger.entities) == 2 and ledger.qualifiers == (qual,)


def test_round_trip_through_json():
    ledger = EntityLedger().merge(
        facts(
            mention("payments platform team", "Payments Platform Team", ["ppt"], "c#0"),
            mention("ppt", "PPT", [], "c#1", 2, 0.5),
            mention("apple inc", "Apple Inc.", ["apple"], "c#1", 3, 0.8),
            relations=[Relation("ppt", "uses", "apple inc", Provenance("c#1", 3), 0.5)],
            qualifiers=[Qualifier("ppt", "date", "2017", Provenance("c#0", 1))],
            chunks=["c#0", "c#1"],
        )
    )
    data = json.loads(json.dumps(ledger.to_dict()))
    back = EntityLedger.from_dict(data)
    assert back == ledger
    assert back.to_dict() == ledger.to_dict()
    assert back.resolve("ppt") == ledger.resolve("ppt") == "payments platform team"


def test_from_dict_of_nothing_is_empty():
    assert EntityLedger.from_dict(None) == EntityLedger()
    assert EntityLedger.from_dict({}) == EntityLedger()


def test_offline_extraction_feeds_the_ledger_without_duplicates():
    gaz = Gazetteer(
        [("ppt", "Payments Platform Team"), ("ledgerline", "Ledgerline Billing Service")],
        aliases=[("ppt", "PPT"), ("ledgerline", "Ledgerline")],
    )
    c1 = chunk(
        "ledgerline#0",
        "ledgerline",
        "Ledgerline Billing Service",
        "Ledgerline is owned by the Payments Platform Team (PPT). It shipped in October 2018.",
    )
    c2 = chunk("ppt#0", "ppt", "Payments Platform Team", "PPT has 9 engineers in Toronto.")
    feats = [passage_features(c, gaz) for c in (c1, c2)]
    ledger = EntityLedger().merge(extract_facts([c1], feats[:1]))
    ledger = ledger.merge(extract_facts([c2], feats[1:]))
    assert sorted(ledger.entities) == ["ledgerline billing service", "payments platform team"]
    team = ledger.entities["payments platform team"]
    assert {p.chunk_id for p in team.provenance} == {"ledgerline#0", "ppt#0"}
    assert ("ledgerline billing service", "payments platform team") in {
        (r.subject, r.object) for r in ledger.relations
    }
    values = {(q.entity, q.type, q.value) for q in ledger.qualifiers}
    assert ("ledgerline billing service", "date", "October 2018") in values
    assert ("payments platform team", "number", "9") in values
    assert ("payments platform team", "place", "Toronto") in values
