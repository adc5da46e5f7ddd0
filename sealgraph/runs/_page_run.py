"""What a run's page reads from a run, and how every text on it is shown.

:class:`_Run` gathers a run's events and state once; :func:`_e` and :func:`_a` are the
page's only ways to put text in content and in attributes (:mod:`sealgraph.runs._html`:
escaped, bidi controls shown, right-to-left text isolated); :func:`page_anchor` makes the
ids that link a page's parts. Shared by the parts of :mod:`sealgraph.runs.page`.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from sealgraph.runs._html import html_attr, html_text
from sealgraph.text.readable import readable

_SCORE_ROWS = 8  # candidates listed per loop, as in the text timeline


_FIND_ROWS = 6  # finds listed per micro-query


_TEXT_CHARS = 4000  # a chunk's text is cut beyond this on the page


_TERMS: tuple[tuple[str, str, str], ...] = (
    ("gap_coverage", "GapCov", "gap_coverage"),
    ("corroboration", "Corr", "corroboration"),
    ("novelty", "Nov", "novelty"),
    ("redundancy", "Red", "redundancy"),
)
"""S(c) terms: (score key, label, weight key in ``config["utility"]``)."""


_REFUSAL_KINDS: tuple[tuple[str, str], ...] = (
    ("do no harm", "do-no-harm"),
    ("dwell", "dwell"),
    ("blocklist", "blocklist"),
    ("no new candidate", "no candidates"),
    ("ε", "ε margin"),
)
"""Refusal reason badges, by a fragment of the reason the replacement step wrote."""


def _e(value: Any) -> str:
    # Every text that reaches the page's content passes here: escaped, bidi controls shown,
    # right-to-left text isolated (sealgraph.runs._html). Attributes pass _a.
    return html_text(value)


def _a(value: Any) -> str:
    # A value inside an attribute or the <title>: escaped, no markup.
    return html_attr(value)


def _shown_title(value: Any) -> str:
    # A title as a person reads it ("Request Files", not "Request Files { #request-files }"),
    # escaped like every other text.
    return _e(readable(str(value)))


def page_anchor(prefix: str, kind: str, key: str) -> str:
    """Return a page id for ``key`` (a chunk id, a path, a question id): ``prefix+kind-slug-hash``.

    Only safe characters, plus a short hash, so that two keys that clean up alike
    (``a.md#1``, ``a-md-1``) stay apart.
    """
    slug = re.sub(r"[^A-Za-z0-9_-]+", "-", key).strip("-")[:60]
    digest = hashlib.sha1(key.encode("utf-8"), usedforsecurity=False).hexdigest()[:6]
    return f"{prefix}{kind}-{slug}-{digest}"


def _num(value: Any, spec: str = ".3f") -> str:
    return format(float(value), spec) if isinstance(value, int | float) else "–"


@dataclass
class _Run:
    """What the page reads from a run, gathered once from its events and state."""

    prefix: str
    events: list[Mapping[str, Any]]
    state: Mapping[str, Any]
    config: Mapping[str, Any]
    titles: dict[str, str] = field(default_factory=dict)
    final_ids: list[str] = field(default_factory=list)

    def of_kind(self, *kinds: str) -> list[Mapping[str, Any]]:
        return [e for e in self.events if e.get("kind") in kinds]

    def chunk_link(self, chunk_id: str) -> str:
        # A chunk of the final evidence links to its text; an evicted one is named only.
        title = self.titles.get(chunk_id)
        label = f'<span class="cid">{_e(chunk_id)}</span>'
        if title:
            label = f'<span class="ctitle">{_shown_title(title)}</span> {label}'
        if chunk_id in self.final_ids:
            return f'<a href="#{page_anchor(self.prefix, "chunk", chunk_id)}">{label}</a>'
        return label


def _gather(
    prefix: str,
    events: Iterable[Mapping[str, Any]],
    state: Mapping[str, Any],
    config: Mapping[str, Any] | None,
) -> _Run:
    safe = re.sub(r"[^A-Za-z0-9_-]", "-", prefix)  # it starts every id and link of the run
    run = _Run(safe, list(events), state, dict(config or {}))
    for item in [*(state.get("packed") or []), *(state.get("citations") or [])]:
        for cid in item.get("chunk_ids") or [item.get("chunk_id")]:
            if cid and item.get("title"):
                run.titles.setdefault(str(cid), str(item["title"]))
    for item in state.get("evidence") or []:
        cid = str(item.get("chunk_id", ""))
        run.titles[cid] = str(item.get("title") or run.titles.get(cid, ""))
        run.final_ids.append(cid)
    return run
