from sealgraph.eval.page import cell_verdict


def record(*, answerable=None, declined=False, **scores):
    out = {"scores": {"declined": declined, **scores}}
    if answerable is not None:
        out["answerable"] = answerable
    return out


def test_declining_an_unanswerable_question_is_right_and_answering_it_wrong():
    assert cell_verdict(record(answerable=False, declined=True)) == (
        "right",
        "right: unanswerable",
    )
    # Scores of an answer to an unanswerable question do not make it right.
    assert cell_verdict(record(answerable=False, declined=False, recall=1.0)) == (
        "low",
        "answered: unanswerable",
    )


def test_an_answerable_question_is_low_when_declined_or_scored_low():
    assert cell_verdict(record(answerable=True, declined=True, recall=1.0))[0] == "low"
    assert cell_verdict(record(recall=0.25))[0] == "low"
    assert cell_verdict(record(answerable=True, recall=1.0)) == ("", "")
