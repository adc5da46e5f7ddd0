"""Quarterly filings of three fictional companies, written for the tests of sets and periods.

Each company files one report per quarter, saved under a file name that gives the
year, the quarter and a ticker ("2023 Q1 NWLP.md"), never the company's name. The
name is on the cover page only, on a line of its own in capitals, with the period
the report covers ("For the quarterly period ended April 1, 2023"). Each report has
a section per subject (net sales, operating expenses, legal proceedings, inventory);
the figures differ per company and quarter, so a test can tell which report a
passage came from.
"""

from __future__ import annotations

from pathlib import Path

__all__ = ["COMPANIES", "QUARTERS", "filings_index", "write_filings"]

COMPANIES = {
    "NWLP": ("NORTHWIND LAMPS, INC.", "Northwind", "lamps"),
    "BRSD": ("BRIGHTSIDE FERRIES CORPORATION", "Brightside", "ferry crossings"),
    "QLTR": ("QUILLTOWER PAPER CO.", "Quilltower", "paper reels"),
}
"""Ticker → (the registrant's name as its cover writes it, short name, what it sells)."""

QUARTERS = (
    ("2022 Q3", "October 1, 2022"),
    ("2023 Q1", "April 1, 2023"),
    ("2023 Q2", "July 1, 2023"),
    ("2023 Q3", "September 30, 2023"),
)
"""(label in the file name, the period end the cover states), earliest first."""


def _filing(registrant: str, short: str, product: str, ended: str, n: int, salt: int) -> str:
    sales = 100 + 7 * n + salt
    return f"""UNITED STATES
SECURITIES AND EXCHANGE COMMISSION
FORM 10-Q
QUARTERLY REPORT
For the quarterly period ended {ended}
{registrant}
(Exact name of registrant as specified in its charter)

## Net sales

{short} reported total net sales of ${sales} million for the quarter, driven by demand
for its {product}. Net sales grew {n + 2} percent compared with the prior year.

## Operating expenses

Operating expenses were ${sales // 2} million. Fulfilment and marketing costs rose as
{short} opened {n + 1} new distribution sites.

## Legal proceedings

{short} is a defendant in {n + 1} patent suits. Management does not expect a material
loss from any of them.

## Inventory

Inventories stood at ${sales // 3} million at the end of the period, as {short} kept
stock of {product} ahead of the busy season.
"""


def write_filings(directory: Path, tickers: tuple[str, ...] = ("NWLP", "BRSD")) -> Path:
    """Write every quarter's filing of the given companies into ``directory``; return it."""
    directory.mkdir(parents=True, exist_ok=True)
    for salt, ticker in enumerate(tickers):
        registrant, short, product = COMPANIES[ticker]
        for n, (label, ended) in enumerate(QUARTERS):
            text = _filing(registrant, short, product, ended, n, 50 * salt)
            (directory / f"{label} {ticker}.md").write_text(text, encoding="utf-8")
    return directory


def filings_index(root: Path, tickers: tuple[str, ...] = ("NWLP", "BRSD", "QLTR")):
    """Build a lexical index (small chunks: one section each) of the companies' filings."""
    from sealgraph.index import build_index

    docs = write_filings(root / "docs", tickers)
    return build_index(
        docs, root / "idx", embedder="none", max_chunk_tokens=60, warn=lambda _: None
    )
