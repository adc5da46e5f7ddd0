"""The language sealgraph reads: one replaceable lexicon, one stemmer, one tokenizer.

Every piece of language-specific knowledge the offline reader uses (stop words,
question words, comparatives, role and head nouns, calendar words, answer-type
cues, auxiliaries, negations, boilerplate cues, the date and number patterns, the
sentence splitter's abbreviations...) is a field of one :class:`Lexicon` value.
Modules never hold word lists of their own: they read the *active* lexicon
(:func:`active`). :data:`sealgraph.text.lexicon.english.ENGLISH` is the default.

One tokenizer, :func:`words` (folded runs of letters and digits, inner apostrophes
kept), and one stemmer, :meth:`Lexicon.stem` (a Snowball stemmer from PyStemmer,
after the lexicon's irregular forms and possessive endings), serve the whole
package: BM25 indexing, the ledger, the gap gate, packing and the offline answer.

Choosing a lexicon
------------------
``SealConfig(lexicon=...)`` (``--set lexicon=...`` or ``--lexicon`` on the command
line) names it: ``"english"``, a name an installed package registers through the
``sealgraph.lexicons`` entry-point group, or a ``"package.module:ATTRIBUTE"`` path
to a :class:`Lexicon` object. An index records the lexicon it was built with (its
manifest's ``lexicon`` and ``lexical.tokenizer_version``) and every run over that
index reads with it; the config's ``lexicon`` chooses the lexicon of new indexes
(and of runs over an index that records none).

A module path is imported only when the user names it in code or on the command
line (:func:`import_lexicon`; ``--lexicon`` and ``$SEALGRAPH_LEXICON`` on every
command that opens an index), never because a manifest, a run's config or a
served client names it (:func:`get_lexicon` refuses an unknown path): an index
folder is data, and so is a request. An index built with your own lexicon is
opened with ``--lexicon package.module:NAME`` again (its tokenizer is checked
against the version the index records), or by a package that registers the
lexicon under an entry point::

    [project.entry-points."sealgraph.lexicons"]
    french = "mypkg.french:FRENCH"

The active lexicon is context-scoped (a :mod:`contextvars` variable):
:func:`use_lexicon` sets it for a block; graph nodes, the pipeline and the index
builder set it from the index or config, so threads started by LangGraph see it.

Writing another language's lexicon
----------------------------------
Write a module that builds a :class:`Lexicon`, every field filled for the
language (the docstring of each field says what it is for and where it is read),
and point the config at it::

    # mypkg/french.py
    import dataclasses, re
    from sealgraph.text.lexicon.english import ENGLISH
    from sealgraph.text.lexicon import Lexicon

    FRENCH = dataclasses.replace(
        ENGLISH,                  # start from English and replace field by field,
        name="french",            # or call Lexicon(...) with every field
        stemmer="french",         # a Snowball algorithm name (Stemmer.algorithms())
        irregular_forms={},
        stop_words=frozenset({"le", "la", "les", "de", "des", "et", ...}),
        question_words=frozenset({"qui", "que", "quoi", "quand", "où", ...}),
        ...
    )

    SealConfig(lexicon="mypkg.french:FRENCH")   # imports mypkg.french: your own code

Patterns (fields ending in ``_re``) are compiled :class:`re.Pattern` objects whose
groups are used as documented; word sets hold folded (lower-case, accent-free, see
:func:`fold`) words. Changing what tokenization depends on (``stemmer``,
``irregular_forms``, ``possessive_suffixes``, ``agent_suffixes``, ``stop_words``) changes
:attr:`Lexicon.tokenizer_version`: indexes built before are then refreshed with
``sealgraph index --index DIR`` (the lexical part only, nothing is re-embedded).
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import inspect
import re
import threading
import unicodedata
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from functools import cached_property, lru_cache
from typing import Any, TypeVar

from sealgraph.errors import ConfigError
from sealgraph.text.lexicon._periods import PeriodWords
from sealgraph.text.lexicon._reader import ReaderWords

__all__ = [
    "ENTRY_POINT_GROUP",
    "LEXICON_ENV",
    "WORD_RE",
    "Lexicon",
    "PeriodWords",
    "active",
    "content_words",
    "fold",
    "get_lexicon",
    "import_lexicon",
    "lexicon_of",
    "lexicon_spec",
    "reads_index_lexicon",
    "register_lexicon",
    "stem",
    "stemmed",
    "stemmed_terms",
    "use_lexicon",
    "words",
]

WORD_RE = re.compile(r"[^\W_]+(?:['’][^\W_]+)*", re.UNICODE)
"""The one word tokenizer: runs of letters and digits, inner apostrophes kept."""

TOKENIZER_REVISION = 1
"""Revision of the tokenization code itself (:func:`words`, :meth:`Lexicon.stem`); part
of every :attr:`Lexicon.tokenizer_version`."""

_STEM_CACHE_SIZE = 200_000
# After these (or at the start) a capital opens a sentence, a quotation or a list item.
_SENTENCE_OPENERS = frozenset(".?!:;\"'“‘([`*-•")
_SPEC_RE = re.compile(r"^[A-Za-z_][\w]*(?:\.[A-Za-z_][\w]*)*:[A-Za-z_][\w]*$")


def fold(text: str) -> str:
    """Lower-case and strip accents (``"Renée"`` → ``"renee"``)."""
    if text.isascii():  # fast path: nothing to decompose
        return text.casefold()
    decomposed = unicodedata.normalize("NFKD", text)
    chars = set(decomposed)
    new = chars - _SEEN
    if new:
        _classify(new)
    if chars.isdisjoint(_MARKS):
        return decomposed.casefold()
    return _MARKS_RE[0].sub("", decomposed).casefold()


_SEEN: set[str] = set()  # characters already classified
_MARKS: set[str] = set()  # the combining marks among them
_MARKS_RE: list[re.Pattern[str]] = [re.compile("(?!)")]  # deletes every mark in _MARKS


def _classify(chars: set[str]) -> None:
    """Note which of ``chars`` are combining marks (``unicodedata.combining``), once each.

    Folding then deletes marks with one regex, with no Python step per character.
    """
    marks = {c for c in chars if unicodedata.combining(c)}
    if marks - _MARKS:
        _MARKS.update(marks)
        _MARKS_RE[0] = re.compile("[" + "".join(re.escape(c) for c in sorted(_MARKS)) + "]")
    _SEEN.update(chars)


def words(text: str) -> list[str]:
    """Split into folded word tokens (letters and digits; inner apostrophes kept).

    The one tokenizer of the package: BM25, the ledger, gaps and packing all use it.
    """
    return WORD_RE.findall(fold(text))


@dataclass(frozen=True, eq=False)
class Lexicon:
    """Everything language-specific sealgraph knows, as one immutable value.

    Two lexicons are equal only when they are the same object (their caches are
    per object). Build variants with :func:`dataclasses.replace`.
    """

    # -- identity and tokenization --------------------------------------------------

    name: str
    """Short name of the language or variant (``"english"``); part of the tokenizer version."""
    stemmer: str
    """Snowball algorithm of :meth:`stem` (one of PyStemmer's ``Stemmer.algorithms()``)."""
    irregular_forms: Mapping[str, str]
    """Irregular inflections mapped to their base form before stemming ("led" → "lead"),
    so that they meet their regular forms."""
    possessive_suffixes: tuple[str, ...]
    """Possessive endings stripped before stemming and from names ("'s")."""
    agent_suffixes: Mapping[str, int]
    """Agent-noun endings stripped from a Snowball stem when at least the given number
    of letters remain, so that a role noun meets its verb ("director" ~ "directed",
    "owner" ~ "owns"): the role words of multi-hop questions."""
    stop_words: frozenset[str]
    """Function words ignored by lexical matching, BM25 and name detection."""

    # -- names, dates and numbers in text ---------------------------------------------

    articles: frozenset[str]
    """Articles; a leading one is no part of a name ("the Harbour Trust" → "harbour trust")."""
    definite_articles: frozenset[str]
    """Definite articles ("the"), read by the question-form parser."""
    indefinite_articles: frozenset[str]
    """Indefinite articles ("a", "an"): an indefinite description in a question."""
    calendar_words: frozenset[str]
    """Month and day names: a capitalised one dates something, it names no entity."""
    month_re: re.Pattern[str]
    """Capitalised month names: the months a question or a sentence states."""
    strict_date_re: re.Pattern[str]
    """A stated date: a year, an ISO date, or a month name with a day or year."""
    date_mention_re: re.Pattern[str]
    """Any date-like word (a year, a month, "century"): text that may hold a date."""
    number_mention_re: re.Pattern[str]
    """A digit or a number word: text that may hold a number."""
    date_re: re.Pattern[str]
    """Date qualifiers read from passages ("3 March 2019", "March 2019", "2019")."""
    number_re: re.Pattern[str]
    """Number qualifiers read from passages ("1,200", "12 percent", "twelve")."""
    amount_re: re.Pattern[str]
    """Amounts of money or percentages ("$3 million", "40 euros")."""
    passage_place_re: re.Pattern[str]
    """Place qualifiers of passages: group 1 is the capitalised name after a place
    preposition ("based in Lisbon"), never a month."""
    place_re: re.Pattern[str]
    """A place stated in text (packing): group 1 is the name after a place preposition."""
    place_before_re: re.Pattern[str]
    """Matches the end of the text before a name when a place preposition introduces it."""
    agent_before_re: re.Pattern[str]
    """Matches the end of the text before a name when "by"/"to" introduces it (an agent)."""
    agent_by_re: re.Pattern[str]
    """Matches the end of the text before a name introduced as an agent: group 1 is the
    word before "by" ("directed by X")."""
    name_connectors: frozenset[str]
    """Lower-case words that join the capitalised words of a name in text ("Bank of
    Valmora"), for the packer's name spans."""
    proper_name_connectors: frozenset[str]
    """Lower-case words allowed inside a proper name of a passage ("Ines van Rooden")."""
    question_name_connectors: frozenset[str]
    """Lower-case words joining the capitalised words of a name in a question."""
    name_openers: frozenset[str]
    """Capitalised words that open a sentence or clause rather than a name ("The", "In")."""
    name_conjunctions: frozenset[str]
    """Conjunctions that split a run of capitalised words into two names ("and")."""
    org_suffixes: frozenset[str]
    """Legal-form and generic suffixes that do not change which organisation is meant."""
    declared_alias_re: re.Pattern[str]
    """A document's declared name for its subject: group 1 an acronym in brackets, group
    2 a name after "also known as"/"called", group 3 one after "or simply"."""
    alias_declaration_re: re.Pattern[str]
    """A long name followed by its acronym in brackets: group 1 the name, group 2 the
    acronym ("Payments Platform Team (PPT)")."""
    title_abbreviations: frozenset[str]
    """Abbreviations after which a period never ends a sentence ("Dr.", "e.g.")."""
    numeric_abbreviations: frozenset[str]
    """Abbreviations that end no sentence when a number follows ("No. 5", "Jan. 3")."""

    # -- reading a question -------------------------------------------------------------

    question_words: frozenset[str]
    """Question words and the auxiliaries that open questions; never relation words."""
    wh_words: frozenset[str]
    """Interrogative words; the one that asks the question sets the answer kind."""
    wh_kinds: Mapping[str, str]
    """Answer kind asked by a wh-word ("who" → ``agent``, "when" → ``date``, "where" →
    ``place``)."""
    selective_wh: frozenset[str]
    """Wh-words that take a noun ("which team", "what year"): the noun sets the kind."""
    identity_wh: frozenset[str]
    """Wh-words of an identity question ("Who is the director of X?")."""
    how_words: frozenset[str]
    """The wh-word of manner or degree ("how"); the next word decides the kind."""
    how_kinds: Mapping[str, str]
    """Answer kind asked by the word after "how" ("much" → ``amount``, "many" → ``number``)."""
    how_quantity_words: frozenset[str]
    """Words after "how" that ask for a quantity or frequency; never relation words."""
    wh_in_situ: frozenset[str]
    """Question words asked in place ("born where?", "a population of what?")."""
    yes_no_opening_re: re.Pattern[str]
    """An auxiliary opening a yes/no question ("Is", "Did", "Can")."""
    asking_re: re.Pattern[str]
    """A clause that asks: a question mark, or a question word or auxiliary opening it."""
    clause_end_re: re.Pattern[str]
    """Where a clause of a question ends (";", ":", or a sentence end before a question word)."""
    scoping_words: frozenset[str]
    """Scoping and asking verbs that open a clause before a name ("Consider the X",
    "Compare X's …"): no part of the name."""
    scoping_re: re.Pattern[str]
    """A clause that only sets the scope ("Consider X's policy", "Regarding X")."""
    comparative_re: re.Pattern[str]
    """Comparative and superlative words (and "both", "same"...) of comparison questions."""
    relating_re: re.Pattern[str]
    """Words that relate two entities ("both", "same", "common", "compared")."""
    comparison_link_re: re.Pattern[str]
    """Words that set compared options side by side ("or", "than")."""
    trailing_choice_re: re.Pattern[str]
    """A question ending by naming the alternatives to choose from ("…, X or Y?")."""
    choice_or_re: re.Pattern[str]
    """The disjunction of a choice question ("or")."""
    choice_exclusion_re: re.Pattern[str]
    """Words that make an "or" question a yes/no one ("both", "same")."""
    choice_opening_re: re.Pattern[str]
    """Question words that open a choice question ("which", "who", "what")."""
    or_split_re: re.Pattern[str]
    """The disjunction between two options, with its spaces."""
    choice_options_re: re.Pattern[str]
    """The two options at the end of a choice question: groups 1 and 2."""
    date_answer_re: re.Pattern[str]
    """Wording of a question asking for a date ("when", "what year")."""
    number_answer_re: re.Pattern[str]
    """Wording of a question asking for a number ("how many", "what percentage")."""
    place_answer_re: re.Pattern[str]
    """Wording of a question asking for a place ("where", "which city")."""
    person_answer_re: re.Pattern[str]
    """Wording of a question asking for a person ("who", "which actor")."""
    date_question_re: re.Pattern[str]
    """Wording that asks for (or compares) dates, for packing's answer-type boost."""
    number_question_re: re.Pattern[str]
    """Wording that asks for (or compares) numbers, for packing's answer-type boost."""
    attribute_nouns: frozenset[str]
    """Nouns that name a value the question asks for ("year", "place"), never an entity."""
    determiners: frozenset[str]
    """Determiners that open a noun phrase of a question ("the", "its", "your")."""
    described_determiners: frozenset[str]
    """Determiners that open a described entity's noun phrase (the offline answer)."""
    relative_words: frozenset[str]
    """Relative pronouns and adverbs ("who", "that", "where")."""
    relative_after_preposition: frozenset[str]
    """Relative pronouns that follow a preposition ("to which", "for whom")."""
    asked_phrase_breaks: frozenset[str]
    """Words that end the asked phrase after its wh-word ("that", "whose")."""
    nesting_prepositions: frozenset[str]
    """Prepositions before a relative pronoun ("the film to which")."""
    question_prepositions: frozenset[str]
    """Prepositions that may open a question ("In which office") or end a phrase."""
    of_words: frozenset[str]
    """Prepositions of a role of something ("the director *of* X")."""
    same_words: frozenset[str]
    """The word of "the same X as Y"."""
    as_words: frozenset[str]
    """The word of "as Y" in "the same X as Y"."""
    predicate_words: frozenset[str]
    """Words after which an indefinite noun phrase is a predicate ("as", "be")."""
    copulas: frozenset[str]
    """Forms of "to be" (and its clitic "'s") that link a subject to what it is."""
    auxiliaries: frozenset[str]
    """Auxiliaries after which a name ends a relative clause without pronoun."""
    asking_auxiliaries: frozenset[str]
    """Auxiliary and modal verbs that end an asked phrase: they ask nothing."""
    complement_heads: frozenset[str]
    """Words right before "that" which make it a conjunction ("indicate that")."""
    property_suffixes: tuple[str, ...]
    """Suffixes of nouns naming a property or event, not an entity ("-ment", "-tion")."""
    property_heads: frozenset[str]
    """Heads that describe a property, a part or a quantity of an entity ("the end of")."""
    value_heads: frozenset[str]
    """Heads of lower-case phrases naming a value asked for ("place of birth")."""
    composed_kin: frozenset[str]
    """Kinship nouns that compose two relations ("grandfather": a parent's parent)."""
    composed_kin_suffixes: tuple[str, ...]
    """Suffixes of composed kinship nouns ("-in-law")."""
    clause_subjects: frozenset[str]
    """Pronouns that open a clause as its subject ("he", "they", "there")."""
    naming_nouns: frozenset[str]
    """Nouns that ask for what names a described entity ("the *name* of the director")."""
    wh_opening_re: re.Pattern[str]
    """A question opening "(preposition) which/what " before the asked noun phrase."""
    head_after_re: re.Pattern[str]
    """The lower-case head noun right after a run of names (group 1)."""

    # -- answer kinds and comparisons --------------------------------------------------

    person_heads: frozenset[str]
    """Head nouns of "which/what <head>" that ask for a person ("Which actor …")."""
    organization_heads: frozenset[str]
    """Head nouns that ask for an organisation ("Which team …")."""
    place_heads: frozenset[str]
    """Head nouns that ask for a place ("In which city …")."""
    time_heads: frozenset[str]
    """Head nouns that ask for a date ("What year …")."""
    quantity_heads: frozenset[str]
    """Head nouns that ask for a number ("What percentage …")."""
    amount_heads: frozenset[str]
    """Head nouns that ask for an amount of money ("What weekly stipend …")."""
    negations: frozenset[str]
    """Words that negate a clause: they flip a yes/no answer."""
    negation_suffixes: tuple[str, ...]
    """Word endings that negate ("n't")."""
    early_re: re.Pattern[str]
    """Comparatives that pick the earlier of two dates ("earlier", "first", "older")."""
    late_re: re.Pattern[str]
    """Comparatives that pick the later of two dates ("later", "younger")."""
    lifespan_re: re.Pattern[str]
    """Comparisons of lifespans ("lived longer"), not of dates."""
    more_re: re.Pattern[str]
    """Comparatives that pick the larger of two numbers."""
    less_re: re.Pattern[str]
    """Comparatives that pick the smaller of two numbers."""
    older_re: re.Pattern[str]
    """Comparatives of a lifespan comparison that pick the longer life."""
    same_re: re.Pattern[str]
    """Words of a "the same X?" question: compare the two stated values."""
    all_re: re.Pattern[str]
    """Words of a "both/all X?" question: each named entity needs its sentence."""
    role_of_re: re.Pattern[str]
    """An option described by a role, at the end of the text before it: group 1 the role
    ("the lead of X")."""

    # -- roles, gaps and queries ---------------------------------------------------------

    date_comparative_re: re.Pattern[str]
    """Comparatives that say a comparison compares dates ("first", "more recently")."""
    count_comparative_re: re.Pattern[str]
    """Comparatives that say a comparison compares counts ("more engineers")."""
    related_role_re: re.Pattern[str]
    """A role of a related entity in a comparison ("has the director who")."""
    role_patterns: tuple[re.Pattern[str], ...]
    """Patterns whose group 1 is a role noun linking hops ("the director of", "X's husband")."""
    agent_roles: frozenset[str]
    """Roles of a maker, named after "by" ("a novel by X"): author, director..."""
    by_words: frozenset[str]
    """The word that introduces a maker ("by")."""
    anaphora_re: re.Pattern[str]
    """Openings that refer back to the previous sentence's subject ("He", "The band")."""
    pointer_words: frozenset[str]
    """First words of navigation and cross-reference lines ("See", "Next")."""
    qualifier_query_words: Mapping[str, str]
    """Words added to a micro-query asking for a qualifier type (``date`` → "date year")."""

    # -- who holds a role now (read by the answer composer only) ---------------------------
    # These fields have defaults (a lexicon written before them still builds) and are left
    # out of :attr:`fingerprint`: no counted table depends on them.

    former_words: frozenset[str] = field(default=frozenset(), metadata={"counted": False})
    """Words just before a name that mark it as a past holder ("its *first* lead, X")."""
    departure_words: frozenset[str] = field(default=frozenset(), metadata={"counted": False})
    """Verbs just after a name that end its tenure ("X *left* in 2019")."""
    asking_word_leads: frozenset[str] = field(default=frozenset(), metadata={"counted": False})
    """Words that may stand before the word that asks ("*since* when", "*and* when"), besides
    :attr:`nesting_prepositions`: after any other word, "when" opens a subordinate clause
    ("… cached *when* using CORS") and asks for no date."""
    past_question_words: frozenset[str] = field(default=frozenset(), metadata={"counted": False})
    """Question words that ask about the past ("did", "was", "first"): without one, a
    question asks who holds a role now, and a past holder is not the answer."""
    conjunctions: frozenset[str] = field(default=frozenset(), metadata={"counted": False})
    """Relative words that may also join a clause to the word before them ("that" of
    "indicate that", "the fact that"): a :attr:`complement_heads` word right after its
    article heads a description before any other relative word ("the state *where* X
    lies" describes a state). Empty: never."""
    holder_verbs: frozenset[str] = field(default=frozenset(), metadata={"counted": False})
    """Verbs that give a name the role after them ("X *served* as commander", "X
    *became* director"): with copulas, determiners and "as", the only words between."""
    entity_year_re: re.Pattern[str] | None = field(default=None, metadata={"counted": False})
    """A year right after a name, group 1 the year: "X *in 2019*", "X*'s 2019* report"."""
    periods: PeriodWords | None = field(default=None, metadata={"counted": False})
    """How reporting periods are written, and questions over a set of them
    (:class:`PeriodWords`); None: periods are not read."""
    reader: ReaderWords = field(default=ReaderWords(), metadata={"counted": False})
    """Answer-type and structure cues and relation synonyms of the offline reader
    (:class:`~sealgraph.text.lexicon._reader.ReaderWords`)."""

    def __post_init__(self) -> None:
        local = threading.local()  # PyStemmer objects must not be shared between threads

        def snowball(word: str) -> str:
            stemmer = getattr(local, "stemmer", None)
            if stemmer is None:
                import Stemmer

                stemmer = local.stemmer = Stemmer.Stemmer(self.stemmer, 0)
            return stemmer.stemWord(word)

        try:
            import Stemmer

            Stemmer.Stemmer(self.stemmer, 0)
        except KeyError:
            raise ConfigError(
                f"lexicon {self.name!r}: unknown Snowball stemmer {self.stemmer!r}; "
                f"choose one of {', '.join(Stemmer.algorithms())}"
            ) from None
        object.__setattr__(self, "_snowball", snowball)
        object.__setattr__(self, "_stem", lru_cache(maxsize=_STEM_CACHE_SIZE)(self._stem_word))

    def _stem_word(self, word: str) -> str:
        for suffix in self.possessive_suffixes:
            if word.endswith(suffix) and len(word) > len(suffix):
                word = word[: -len(suffix)]
                break
        word = self.irregular_forms.get(word, word)
        if word.isdigit():
            return word
        stemmed = self._snowball(word)  # type: ignore[attr-defined]
        for suffix, keep in self.agent_suffixes.items():
            if stemmed.endswith(suffix) and len(stemmed) - len(suffix) >= keep:
                return stemmed[: -len(suffix)]
        return stemmed

    def stem(self, word: str) -> str:
        """Stem a folded word so that its inflections meet ("directed" ~ "directing").

        The possessive ending is dropped, an irregular form becomes its base form,
        then the Snowball stemmer of :attr:`stemmer` runs and an agent-noun ending
        (:attr:`agent_suffixes`) is dropped from its stem. Cached.
        """
        return self._stem(word)  # type: ignore[attr-defined]

    def content_words(self, text: str) -> list[str]:
        """Words of ``text`` minus stop words, in order, with repeats."""
        stop = self.stop_words
        return [w for w in words(text) if w not in stop]

    def terms(self, text: str) -> frozenset[str]:
        """Stemmed content words of ``text``, as a set."""
        stop = self.stop_words
        return frozenset(self.stem(w) for w in words(text) if w not in stop)

    @cached_property
    def leading_article_re(self) -> re.Pattern[str]:
        """A leading article and its spaces (case-insensitive)."""
        alternatives = "|".join(sorted(map(re.escape, self.articles), key=lambda a: (-len(a), a)))
        return re.compile(rf"^(?:{alternatives})\s+", re.I)

    @cached_property
    def possessive_re(self) -> re.Pattern[str]:
        """A possessive ending at the end of a word."""
        alternatives = "|".join(map(re.escape, self.possessive_suffixes))
        return re.compile(rf"(?:{alternatives})\b")

    @cached_property
    def name_run_re(self) -> re.Pattern[str]:
        """A run of capitalised words joined by :attr:`name_connectors` ("Bank of Valmora")."""
        alternatives = "|".join(
            sorted(map(re.escape, self.name_connectors), key=lambda a: (-len(a), a))
        )
        return re.compile(
            r"(?<![\w'’])[A-Z][\w'’&-]*(?:[ \t]+(?:(?:"
            + alternatives
            + r")[ \t]+)*[A-Z0-9][\w'’&-]*)*"
        )

    def written_names(self, text: str) -> list[str]:
        """Words ``text`` writes as names, in order: "gRPC", "Brotli" mid-sentence.

        A word is written as a name when a capital follows its first letter
        ("gRPC", "FastAPI"), or when it is capitalised away from the start of a
        sentence ("enable Brotli"). A word in capitals only ("QUIC", "WW2", "SWA's") is
        left out: an acronym is often spelled out in the documents it stands for. Runs on
        the text as written (not folded).
        """
        names = []
        for match in WORD_RE.finditer(text):
            word = match.group()
            core = next(
                (word[: -len(s)] for s in self.possessive_suffixes if word.endswith(s)), word
            )
            letters = [c for c in core if c.isalpha()]
            if not letters or all(c.isupper() for c in letters):
                continue
            inner = any(c.isupper() for c in word[1:])
            before = text[: match.start()].rstrip()
            initial = not before or before[-1] in _SENTENCE_OPENERS
            if inner or (word[0].isupper() and not initial):
                names.append(word)
        return names

    @cached_property
    def tokenizer_version(self) -> str:
        """What BM25 tokens and stemmed terms depend on: name, stemmer and a digest.

        Stored in index manifests: an index whose version differs is refreshed.
        """
        digest = _digest(
            {
                "revision": TOKENIZER_REVISION,
                "words": WORD_RE.pattern,
                "stemmer": self.stemmer,
                "irregular_forms": self.irregular_forms,
                "possessive_suffixes": self.possessive_suffixes,
                "agent_suffixes": self.agent_suffixes,
                "stop_words": self.stop_words,
            }
        )
        return f"{self.name}:snowball-{self.stemmer}:{digest[:12]}"

    @cached_property
    def fingerprint(self) -> str:
        """Digest of every field: tables computed with another lexicon are recomputed."""
        return _digest(
            {
                f.name: getattr(self, f.name)
                for f in dataclasses.fields(self)
                if f.metadata.get("counted", True)
            }
        )[:16]

    def __repr__(self) -> str:
        return f"Lexicon({self.name!r}, stemmer={self.stemmer!r})"


def _canonical(value: Any) -> Any:
    if isinstance(value, re.Pattern):
        return ["re", value.pattern, int(value.flags)]
    if isinstance(value, (frozenset, set)):
        return sorted(_canonical(v) for v in value)
    if isinstance(value, Mapping):
        return sorted([str(k), _canonical(v)] for k, v in value.items())
    if isinstance(value, (tuple, list)):
        return [_canonical(v) for v in value]
    return value


def _digest(value: Any) -> str:
    import json

    text = json.dumps(_canonical(value), ensure_ascii=False, sort_keys=True)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


# ---------------------------------------------------------------------------
# The active lexicon (the registry is in _registry.py, imported at the end).

_ACTIVE: ContextVar[Lexicon | None] = ContextVar("sealgraph_lexicon", default=None)


def active() -> Lexicon:
    """Return the lexicon of the current context.

    :data:`~sealgraph.text.lexicon.english.ENGLISH` unless :func:`use_lexicon` set another.
    """
    lexicon = _ACTIVE.get()
    return ENGLISH if lexicon is None else lexicon


@contextmanager
def use_lexicon(lexicon: Lexicon | str) -> Iterator[Lexicon]:
    """Make ``lexicon`` (a :class:`Lexicon` or a spec for :func:`get_lexicon`) the active one.

    Context-scoped: other threads and tasks keep theirs, and threads started inside
    the block with a copy of the context (as LangGraph's executor does) see it.
    """
    resolved = get_lexicon(lexicon)
    token = _ACTIVE.set(resolved)
    try:
        yield resolved
    finally:
        _ACTIVE.reset(token)


def lexicon_of(index: Any, fallback: Lexicon | str | None = None) -> Lexicon:
    """Return the lexicon an index was built with (its ``lexicon`` attribute).

    An index that records none reads with ``fallback`` (a lexicon or spec), else
    with the active lexicon.
    """
    found = getattr(index, "lexicon", None)
    if isinstance(found, Lexicon):
        return found
    if fallback is not None:
        return get_lexicon(fallback)
    return active()


_F = TypeVar("_F", bound=Callable[..., Any])


def reads_index_lexicon(fn: _F) -> _F:
    """Run ``fn`` with the lexicon of its ``index`` argument active (see :func:`lexicon_of`).

    For an index that records none, the lexicon its ``config`` argument names (a
    :class:`~sealgraph.config.SealConfig`'s ``lexicon``), else the active one.
    """
    signature = inspect.signature(fn)

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        given = signature.bind_partial(*args, **kwargs).arguments
        fallback = getattr(given.get("config"), "lexicon", None)
        with use_lexicon(lexicon_of(given.get("index"), fallback)):
            return fn(*args, **kwargs)

    return wrapper  # type: ignore[return-value]


# ---------------------------------------------------------------------------
# Module-level shortcuts that read the active lexicon.


def stem(word: str) -> str:
    """Stem a folded word with the active lexicon (see :meth:`Lexicon.stem`)."""
    return active().stem(word)


def content_words(text: str) -> list[str]:
    """Words minus the active lexicon's stop words, in order, with repeats."""
    return active().content_words(text)


@lru_cache(maxsize=100_000)
def _stemmed_terms(lexicon: Lexicon, text: str) -> frozenset[str]:
    return lexicon.terms(text)


def stemmed_terms(text: str) -> frozenset[str]:
    """Stemmed content words of a text, as a set (active lexicon; cached)."""
    return _stemmed_terms(active(), text)


@lru_cache(maxsize=1024)
def _stemmed(lexicon: Lexicon, words_: frozenset[str]) -> frozenset[str]:
    return frozenset(lexicon.stem(w) for w in words_)


def stemmed(words_: frozenset[str], lexicon: Lexicon | None = None) -> frozenset[str]:
    """Stems of a word set of a lexicon (the active one by default; cached)."""
    return _stemmed(lexicon or active(), words_)


from sealgraph.text.lexicon._registry import (  # noqa: E402  (needs Lexicon defined)
    ENTRY_POINT_GROUP,
    LEXICON_ENV,
    get_lexicon,
    import_lexicon,
    lexicon_spec,
    register_lexicon,
)
from sealgraph.text.lexicon.english import ENGLISH  # noqa: E402  (needs Lexicon defined)

register_lexicon(ENGLISH)
