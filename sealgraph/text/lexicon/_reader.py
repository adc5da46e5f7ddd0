"""The words the offline reader reads a question's answer type and a page's structure by.

One field of :class:`sealgraph.text.lexicon.Lexicon` (``reader``) holds them, so a
lexicon written before it still builds (with no cues: the reader then relies on
word overlap and the embedder alone). Word sets hold folded words; patterns are
compiled :class:`re.Pattern` objects whose groups are used as documented.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

__all__ = ["ReaderWords"]

_NEVER = re.compile(r"(?!x)x")


@dataclass(frozen=True, slots=True)
class ReaderWords:
    """Answer-type cues, structure cues and relation synonyms of one language."""

    version_heads: frozenset[str] = frozenset()
    """Head nouns a version number answers ("which *version*", "which *release*")."""
    number_heads: frozenset[str] = frozenset()
    """Head nouns a number answers besides the lexicon's quantity heads ("which status
    *code*", "which *port*")."""
    code_heads: frozenset[str] = frozenset()
    """Head nouns a name written as code answers ("which *decorator*", "which *setting*")."""
    time_units: frozenset[str] = frozenset()
    """Units of time: a number followed by one is a duration ("every 15 *seconds*")."""
    measure_units: frozenset[str] = frozenset()
    """Units a number is measured in, kept with it in a short answer ("10 *MB*")."""
    duration_words: frozenset[str] = frozenset()
    """Words after the "how" word that ask for a duration ("how *long*", "how *often*")."""
    default_words: frozenset[str] = frozenset()
    """Words that ask for a default value ("by *default*")."""
    condition_words: frozenset[str] = frozenset()
    """Words opening a clause that sets a condition, not what is asked ("*If* I kept the
    default …, what does X do?", "*When* checking …, which function …?")."""
    default_re: re.Pattern[str] = _NEVER
    """A stated default: "Defaults to `500`", "Default: 2", "(default: x)"; group 1 is the value."""
    procedure_re: re.Pattern[str] = _NEVER
    """Openings of a question that asks for a procedure ("How do I …", "How to …")."""
    part_split_re: re.Pattern[str] = _NEVER
    """Where a question asks a second part: the match ends before the part's asking word
    (", and *how* do I …")."""
    synonyms: tuple[tuple[str, ...], ...] = field(default=())
    """Groups of words and phrases that state one relation ("launch", "go live",
    "release"): a unit stating one states what the question asks with another. Each
    member is written as the words a sentence uses; they are compared stemmed."""
    subject_pronouns: frozenset[str] = frozenset()
    """Pronouns that stand as a question's subject before its verb ("How do *I* use …")."""
    yes: str = "yes"
    """The short answer of a polar question the context confirms."""
    no: str = "no"
    """The short answer of a polar question the context denies."""
