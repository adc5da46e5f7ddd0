"""The fan-out part of a run's page: each repair branch, and how they were merged.

A question over a set larger than k fans out (:mod:`sealgraph.repair.fanout`): each
group of members is repaired by a branch with its own k, then the branches' sets are
merged and packed once. This part shows, per branch, the members it repaired, the
passages it kept, the gaps its gate left open and why it stopped; then the merge
(the merged set, the members missing). Everything of the corpus is escaped.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from sealgraph.runs._page_run import _e

__all__ = ["branches_part"]


def _row(data: Mapping[str, Any], chunk_link: Callable[[str], str]) -> str:
    """One branch's table row: number, members, passages kept, gaps, loops, stop."""
    group = data.get("group") or {}
    members = ", ".join(_e(label) for label in group.get("labels") or group.get("members") or [])
    slots = "<br>".join(chunk_link(str(s.get("chunk_id", ""))) for s in data.get("slots") or [])
    gaps = "<br>".join(_e(g.get("reason", "")) for g in data.get("gaps") or []) or "none"
    return (
        f'<tr><td class="n">{_e(data.get("branch", ""))}</td>'
        f'<td>{_e(group.get("name", ""))}<br><span class="mute">{members}</span></td>'
        f'<td>{slots}</td><td>{gaps}</td><td class="n">{_e(data.get("loops", 0))}</td>'
        f"<td>{_e(data.get('stop', ''))}</td></tr>"
    )


def branches_part(events: Sequence[Mapping[str, Any]], chunk_link: Callable[[str], str]) -> str:
    """Render the branches and the merge of a fanned-out run ("" for any other run).

    ``chunk_link`` renders a chunk id (a link to its text when it is in the evidence).
    """
    branches = [e for e in events if e.get("node") == "branch" and e.get("kind") == "branch"]
    if not branches:
        return ""
    ordered = sorted(branches, key=lambda e: int((e.get("data") or {}).get("branch", 0)))
    rows = [_row(e.get("data") or {}, chunk_link) for e in ordered]
    merged = [e for e in events if e.get("node") == "merge" and e.get("kind") == "merge"]
    merge_line = f"<p>{_e(merged[-1].get('message', ''))}</p>" if merged else ""
    return (
        "<h2>Fan-out: one repair branch per group of set members</h2>\n"
        '<table class="branches"><tr><th>branch</th><th>members</th><th>passages kept</th>'
        "<th>gaps left open</th><th>loops</th><th>stopped</th></tr>\n"
        + "\n".join(rows)
        + "</table>\n"
        + merge_line
    )
