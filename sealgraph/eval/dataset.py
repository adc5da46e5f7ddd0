"""Evaluation questions and their gold labels from multi-hop QA JSONL files.

The files follow the shared multi-hop QA schema (``id``, ``question``,
``answer``, ``paragraphs`` of ``{"title", "sentences"}``, ``supporting_facts``
of ``[title, sentence_index]``); :func:`sealgraph.ingest.load_qa_records`
validates it. This module only derives what the metrics need: the gold titles
and the gold supporting sentences of each question.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sealgraph.errors import IngestError, InputError

__all__ = [
    "EvalQuestion",
    "gold_sentences",
    "gold_titles",
    "load_questions",
    "question_from_record",
]


@dataclass(frozen=True, slots=True)
class EvalQuestion:
    """One question to evaluate, with its gold labels."""

    qid: str
    """Record id (``id`` field of the JSONL line)."""
    question: str
    """The question text."""
    answer: str
    """Gold answer."""
    gold_titles: tuple[str, ...]
    """Distinct titles of the supporting facts, in order of first mention."""
    gold_sentences: tuple[str, ...]
    """Text of each distinct supporting fact that points to an existing sentence."""
    dataset: str = ""
    """Source dataset name, when the record has one."""
    type: str = ""
    """Question type (``bridge``, ``comparison``, ``2hop``, ...), when the record has one."""


def gold_titles(record: Mapping[str, Any]) -> tuple[str, ...]:
    """Return the distinct titles named by a record's supporting facts, in order."""
    return tuple(dict.fromkeys(str(title) for title, _ in record.get("supporting_facts", [])))


def gold_sentences(record: Mapping[str, Any]) -> tuple[str, ...]:
    """Return the sentences a record's supporting facts point to.

    Each distinct ``[title, index]`` resolves against the first paragraph with that
    title that has a sentence at ``index``. Facts that point past the end of every
    such paragraph are skipped: the public data has a few of these errors.
    """
    paragraphs_by_title: dict[str, list[Sequence[str]]] = {}
    for paragraph in record.get("paragraphs", []):
        paragraphs_by_title.setdefault(str(paragraph["title"]), []).append(paragraph["sentences"])
    sentences: list[str] = []
    for title, index in dict.fromkeys(
        (str(title), int(index)) for title, index in record.get("supporting_facts", [])
    ):
        for paragraph_sentences in paragraphs_by_title.get(title, []):
            if 0 <= index < len(paragraph_sentences):
                sentences.append(str(paragraph_sentences[index]))
                break
    return tuple(sentences)


def question_from_record(record: Mapping[str, Any]) -> EvalQuestion:
    """Build an :class:`EvalQuestion` from one validated QA record."""
    return EvalQuestion(
        qid=str(record["id"]),
        question=str(record["question"]),
        answer=str(record["answer"]),
        gold_titles=gold_titles(record),
        gold_sentences=gold_sentences(record),
        dataset=str(record.get("dataset") or ""),
        type=str(record.get("type") or ""),
    )


def load_questions(path: str | Path, limit: int | None = None) -> list[EvalQuestion]:
    """Load the questions of a QA JSONL file (the first ``limit`` of them when given).

    Beyond the schema checks of :func:`sealgraph.ingest.load_qa_records`, every
    record must carry what scoring needs: an ``id``, an ``answer`` and its
    ``supporting_facts``.

    Raises:
        InputError: The file is missing or holds no question, or ``limit`` < 1.
        IngestError: A line is not valid JSON (or nested too deeply), not in the
            schema, or lacks a field that scoring needs (the message names the
            file and line).

    """
    from sealgraph.ingest import load_qa_records

    path = Path(path)
    if limit is not None and limit < 1:
        raise InputError(f"--limit must be at least 1, got {limit}")
    records = load_qa_records(path)
    if not records:
        raise InputError(f"questions file {path} holds no question")
    line_numbers = _record_line_numbers(path)
    for record, line_no in zip(records, line_numbers, strict=True):
        missing = [key for key in _SCORING_FIELDS if record.get(key) is None]
        if missing:
            raise IngestError(
                f"{path}:{line_no}: cannot score this question without "
                + ", ".join(f'"{key}"' for key in missing)
            )
    if limit is not None:
        records = records[:limit]
    return [question_from_record(record) for record in records]


_SCORING_FIELDS = ("id", "answer", "supporting_facts")


def _record_line_numbers(path: Path) -> list[int]:
    # load_qa_records returns one record per non-blank line, in file order.
    text = path.read_bytes().decode("utf-8-sig", errors="replace")
    return [n for n, line in enumerate(text.split("\n"), start=1) if line.strip()]
