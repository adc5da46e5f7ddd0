"""The English lexicon, sealgraph's default (see :mod:`sealgraph.text.lexicon`).

Every list here was written for questions and passages of ordinary English text;
none names an entity of any corpus. Field documentation is on
:class:`sealgraph.text.lexicon.Lexicon`.
"""

from __future__ import annotations

import re
from types import MappingProxyType

from sealgraph.text.lexicon import Lexicon, PeriodWords
from sealgraph.text.lexicon._reader import ReaderWords


def _w(text: str) -> frozenset[str]:
    """Return the set of the space-separated words of ``text``."""
    return frozenset(text.split())


_MONTHS = "January|February|March|April|May|June|July|August|September|October|November|December"
_MONTH_ABBREVIATIONS = "Jan|Feb|Mar|Apr|Jun|Jul|Aug|Sep|Sept|Oct|Nov|Dec"
_NUMBER_WORDS = (
    "one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|twenty|thirty|"
    "forty|fifty|hundred|thousand|million|billion"
)

_ATTRIBUTE_NOUNS = _w(
    "age birth capital city country county date death first height kind language last "
    "name nationality number one part place population same size state time title type "
    "year"
)
_PROPERTY_HEADS = _ATTRIBUTE_NOUNS | _w(
    "end rest top bottom side middle edge centre center start half majority amount total "
    "share list set sort form version piece section portion area course period history "
    "field case use value cost price rate level percentage proportion sum average range "
    "scope purpose role origin cause effect impact result reason basis term terms count "
    "figure length width depth weight speed score rank status nature content contents "
    "detail details aspect extent degree example lot lots number numbers names years "
    "dates ages"
)
# What an organisation reports of itself: a quantity or a document of its own, never
# an entity one hop away ("Intel's gross margin", "Amazon's Q2 2023 report").
_REPORTED_HEADS = _w(
    "sales revenue revenues income earnings margin margins expense expenses expenditure "
    "expenditures spending costs assets liabilities debt equity inventory inventories cash "
    "flows profit profits losses growth performance financials report reports filing filings "
    "statement statements policies policy"
)
# Words that open a question (after a comma: a second part of it).
_ASKING_OPENERS = (
    "what|which|who|whom|whose|when|where|why|how|is|are|was|were|do|does|did|can|could|has|"
    "have|had|will|would|should|shall|may"
)
_DETERMINERS = _w("the a an this these those its his her their our your")

_MONTH_NUMBERS = {m.lower(): i for i, m in enumerate(_MONTHS.split("|"), start=1)}
_DATE = (
    rf"(?P<month>{_MONTHS}|{_MONTH_ABBREVIATIONS})\.?\s+(?P<day>\d{{1,2}}),?\s+(?P<year>(?:19|20)\d{{2}})",
    rf"(?P<day>\d{{1,2}})\s+(?P<month>{_MONTHS}|{_MONTH_ABBREVIATIONS})\.?,?\s+(?P<year>(?:19|20)\d{{2}})",
)
_PERIOD_NOUNS = (
    r"(?:quarters|periods|years|months|filings|reports|quarterly\s+reports|annual\s+reports|"
    r"statements|10-?Qs|10-?Ks)"
)
_PERIOD_MODIFIERS = (
    r"(?:past|previous|prior|preceding|historical|reported|reporting|recent|successive|"
    r"consecutive|several|multiple|different|various|quarterly|annual|fiscal|last\s+\w+)"
)

PERIODS = PeriodWords(
    months=MappingProxyType(
        {
            **_MONTH_NUMBERS,
            **{
                a.lower(): _MONTH_NUMBERS[m.lower()]
                for a, m in (
                    ("Jan", "January"),
                    ("Feb", "February"),
                    ("Mar", "March"),
                    ("Apr", "April"),
                    ("Jun", "June"),
                    ("Jul", "July"),
                    ("Aug", "August"),
                    ("Sep", "September"),
                    ("Sept", "September"),
                    ("Oct", "October"),
                    ("Nov", "November"),
                    ("Dec", "December"),
                )
            },
        }
    ),
    ordinals=MappingProxyType({"first": 1, "second": 2, "third": 3, "fourth": 4}),
    quarter_res=(
        re.compile(
            r"\bQ(?P<q>[1-4])\s*(?:of\s+)?(?:(?:fiscal\s+(?:year\s+)?|FY\s?)?(?P<year>(?:19|20)\d{2})"
            r"|['’](?P<yy>\d{2}))\b",
            re.I,
        ),
        re.compile(r"\b(?:FY\s?)?(?P<year>(?:19|20)\d{2})\s*Q(?P<q>[1-4])\b", re.I),
        re.compile(
            r"\b(?P<ordinal>first|second|third|fourth)\s+(?:fiscal\s+)?quarter\s+(?:of\s+)?"
            r"(?:(?:the\s+)?fiscal\s+(?:year\s+)?)?(?P<year>(?:19|20)\d{2})\b",
            re.I,
        ),
    ),
    date_res=tuple(re.compile(rf"\b{d}\b", re.I) for d in _DATE),
    period_end_re=re.compile(
        r"\b(?:period|quarter|months|year|weeks)\s+(?:ended|ending|end(?:ed)?\s+on)\s+"
        rf"(?P<date>(?:{_MONTHS}|{_MONTH_ABBREVIATIONS})\.?\s+\d{{1,2}},?\s+(?:19|20)\d{{2}}"
        rf"|\d{{1,2}}\s+(?:{_MONTHS}|{_MONTH_ABBREVIATIONS})\.?,?\s+(?:19|20)\d{{2}})",
        re.I,
    ),
    fiscal_year_re=re.compile(r"\b(?:fiscal\s+(?:year\s+)?|FY\s?)(?P<year>(?:19|20)\d{2})\b", re.I),
    recent_re=re.compile(
        r"\b(?:latest|most\s+recent|newest|last|current)\s+(?:fiscal\s+)?"
        r"(?:10-?[QK]|quarter|quarterly\s+report|report|filing|period|annual\s+report)\b",
        re.I,
    ),
    set_re=re.compile(
        r"\bover\s+time\b"
        r"|\b(?:over|across|throughout|during|in|for|between|among|relative\s+to|"
        r"compared?\s+(?:to|with)|versus|vs\.?)\s+"
        r"(?:(?:the|these|those|all|its|their|[\w.&-]+['’]s)\s+)?(?:each\s+of\s+(?:the\s+)?)?"
        rf"(?:{_PERIOD_MODIFIERS}\s+)*{_PERIOD_NOUNS}\b"
        r"|\beach\s+(?:reported\s+|reporting\s+|fiscal\s+)?(?:quarter|period|year|filing|report)\b"
        r"|\bover\s+the\s+(?:reported|reporting)\s+(?:quarter|period)\b",
        re.I,
    ),
    code_re=re.compile(r"\b\d+-[A-Z]{1,2}s?\b"),
)
"""English reporting periods (:class:`~sealgraph.text.lexicon.PeriodWords`)."""
_COPULAS = _w("is was are were 's ’s")

ENGLISH = Lexicon(
    name="english",
    stemmer="english",
    # Irregular verb forms of "who leads / which company bought / who wrote" questions.
    # Forms that are also ordinary words ("found", "left", "rose") are left out: a
    # wrong merge would link unrelated sentences.
    irregular_forms=MappingProxyType(
        {
            "led": "lead",
            "ran": "run",
            "won": "win",
            "wrote": "write",
            "written": "write",
            "began": "begin",
            "begun": "begin",
            "built": "build",
            "bought": "buy",
            "sold": "sell",
            "held": "hold",
            "made": "make",
            "gave": "give",
            "given": "give",
            "took": "take",
            "taken": "take",
            "became": "become",
            "grew": "grow",
            "grown": "grow",
            "chose": "choose",
            "chosen": "choose",
            "paid": "pay",
            "brought": "bring",
            "taught": "teach",
            "sent": "send",
            "spent": "spend",
            "went": "go",
            "gone": "go",
            "knew": "know",
            "known": "know",
            "kept": "keep",
            "said": "say",
            "sang": "sing",
            "sung": "sing",
            "spoke": "speak",
            "spoken": "speak",
            "thought": "think",
        }
    ),
    possessive_suffixes=("'s", "’s"),
    # Snowball keeps agent nouns apart from their verbs; role words need them to meet
    # ("the director of X" / "directed by Y", "the owner of X" / "owns X").
    agent_suffixes=MappingProxyType({"er": 3, "or": 4}),
    stop_words=_w(
        "a about above after again against all also am an and any are as at be because been "
        "before being below between both but by can could d did do does doing down during "
        "each few for from further had has have having he her here hers herself him himself "
        "his how i if in into is it its itself just ll m me more most my myself no nor not "
        "now o of off on once only or other our ours ourselves out over own re s same she "
        "should so some such t than that the their theirs them themselves then there these "
        "they this those through to too under until up ve very was we were what when where "
        "which while who whom whose why will with would y you your yours yourself yourselves"
    ),
    # -- names, dates and numbers ----------------------------------------------------
    articles=_w("the a an"),
    definite_articles=_w("the"),
    indefinite_articles=_w("a an"),
    calendar_words=_w(
        "january february march april may june july august september october november "
        "december monday tuesday wednesday thursday friday saturday sunday"
    ),
    month_re=re.compile(rf"\b(?:{_MONTHS})\b"),
    strict_date_re=re.compile(
        rf"\b(?:1[0-9]{{3}}|20[0-9]{{2}})s?\b|\b\d{{4}}-\d{{2}}-\d{{2}}\b|"
        rf"\b(?:{_MONTHS})\b(?=\s*\d)|\b\d{{1,2}}\s+(?:{_MONTHS})\b"
    ),
    date_mention_re=re.compile(
        rf"\b(?:1[0-9]{{3}}|20[0-9]{{2}})s?\b|\b(?:{_MONTHS.lower()})\b|\bcentur(?:y|ies)\b",
        re.IGNORECASE,
    ),
    number_mention_re=re.compile(rf"\d|\b(?:{_NUMBER_WORDS}|dozen)\b", re.IGNORECASE),
    date_re=re.compile(
        rf"\b(?:(?:\d{{1,2}}\s+)?(?:{_MONTHS.lower()}|{_MONTH_ABBREVIATIONS.lower()})\.?"
        rf"(?:\s+\d{{1,2}})?,?\s+\d{{3,4}}|\d{{4}}-\d{{2}}-\d{{2}}|(?:1[0-9]|20)\d{{2}}s?)\b",
        re.I,
    ),
    number_re=re.compile(
        r"\b(?:\d{1,3}(?:,\d{3})+|\d+(?:\.\d+)?)(?:\s*(?:%|percent|million|billion|thousand))?\b"
        rf"|\b(?:{_NUMBER_WORDS})\b",
        re.I,
    ),
    amount_re=re.compile(
        r"(?:[$€£¥]\s?|\b[A-Z]{3}\s)\d[\d,]*(?:\.\d+)?(?:\s?(?:million|billion|thousand|[mbk]n?)\b)?"
        r"|\b\d[\d,]*(?:\.\d+)?\s?(?:million|billion|thousand)?\s?"
        r"(?:dollars|euros|pounds|yen|percent|%)"
    ),
    # "in October 2018" is a date, not a place: a month name cannot start a place.
    passage_place_re=re.compile(
        rf"\b(?:in|at|from|near|based in|located in|born in)\s+(?!(?:{_MONTHS}|"
        rf"{_MONTH_ABBREVIATIONS})\b)"
        r"((?:[A-Z][\w'’.-]+)(?:,?\s+[A-Z][\w'’.-]+){0,3})"
    ),
    place_re=re.compile(
        r"\b(?:in|at|from|near|to|based in|located in)\s+(?:the\s+)?"
        r"([A-Z][\w'’.-]+(?:\s+[A-Z][\w'’.-]+){0,3})"
    ),
    place_before_re=re.compile(r"\b(?:in|at|from|near|based in|located in)\s+(?:the\s+)?$"),
    agent_before_re=re.compile(r"\b(?:by|to)\s+(?:the\s+)?$"),
    agent_by_re=re.compile(r"([^\W_]+)\s+by\s+$"),
    name_connectors=_w("of the de von van der du da del la le and for &"),
    proper_name_connectors=_w("of and the de del della da di du la le van von der den y"),
    question_name_connectors=_w("of the and de von van der du la le & y"),
    name_openers=_w(
        "the a an in on at of for from by with to he she it they we his her its their this "
        "that these those when after before during as while but and or if since although"
    ),
    name_conjunctions=_w("and"),
    org_suffixes=_w(
        "inc incorporated corp corporation company co ltd limited llc plc gmbh ag sa "
        "holdings group computer computers"
    ),
    # "known as" / "called" name the subject only after a copula, an adverb or a comma
    # ("X, usually just called Y", "X is also known as Y"); after a noun they name
    # something else ("the movement known as Y", "a room called Z").
    declared_alias_re=re.compile(
        r"\(([A-Z][A-Za-z0-9&]{1,9})\)"
        r"|(?:\b(?:also|commonly|usually|often|better|simply|formerly|originally|popularly|"
        r"sometimes|widely|is|was|are|were)\s+(?:just\s+)?|,\s*)"
        r"(?:known as|called|nicknamed|abbreviated(?: as)?)\s+"
        r"(?:the\s+)?[\"“']?([A-Z][\w'’&.-]*(?:\s+[A-Z][\w'’&.-]*){0,4})"
        r"|\bor simply\s+(?:the\s+)?[\"“']?([A-Z][\w'’&.-]*(?:\s+[A-Z][\w'’&.-]*){0,4})"
    ),
    alias_declaration_re=re.compile(
        r"([A-Z][\w'’&-]*(?:\s+(?:of|the|and|for|&)?\s*[A-Z][\w'’&-]*)+)\s*\(([A-Z][A-Za-z0-9&]{1,9})\)"
    ),
    title_abbreviations=_w(
        "mr mrs ms messrs mme mlle dr prof st jr sr rev hon sen rep gov pres gen col capt "
        "cmdr lt sgt maj adm fr mt ft vs cf al approx e.g i.e viz"
    ),
    numeric_abbreviations=_w(
        "no nos vol vols fig figs p pp ch chap sec art op ca c jan feb mar apr jun jul aug "
        "sep sept oct nov dec"
    ),
    # -- reading a question --------------------------------------------------------------
    question_words=_w("what which who whom whose when where why how is are was were do does did"),
    wh_words=_w("who whom whose what which when where how why"),
    wh_kinds=MappingProxyType(
        {"who": "agent", "whom": "agent", "whose": "agent", "when": "date", "where": "place"}
    ),
    selective_wh=_w("what which"),
    identity_wh=_w("who what which"),
    how_words=_w("how"),
    how_kinds=MappingProxyType(
        {
            "much": "amount",
            "many": "number",
            "old": "number",
            "long": "number",
            "tall": "number",
            "far": "number",
            "large": "number",
            "big": "number",
            "high": "number",
        }
    ),
    how_quantity_words=_w("many much old long tall far large big high often"),
    wh_in_situ=_w("what which where when whom how"),
    yes_no_opening_re=re.compile(
        r"^\s*(is|are|was|were|do|does|did|can|could|has|have|had|will|would|should|shall|may)\b",
        re.I,
    ),
    asking_re=re.compile(rf"\?\s*$|^\s*(?:{_ASKING_OPENERS}|in what|in which)\b", re.I),
    clause_end_re=re.compile(
        r"\s*[;:]\s+|(?<=[.!?])\s+(?=(?:What|Which|Who|Whom|Whose|When|Where|Why|How|Is|Are|"
        r"Was|Were|Do|Does|Did|Can|Could|Has|Have|Had|Will|Would|Should)\b)"
    ),
    scoping_words=_w(
        "consider regarding concerning given compare describe explain list summarize summarise "
        "outline analyze analyse examine identify"
    ),
    scoping_re=re.compile(
        r"^\s*(?:consider|regarding|concerning|about|given|according to|with respect to|"
        r"in the context of|for|in)\b",
        re.I,
    ),
    comparative_re=re.compile(
        r"\b(older|younger|earlier|later|first|last|longer|shorter|larger|smaller|bigger|"
        r"higher|lower|more|less|fewer|greater|earliest|latest|oldest|youngest|"
        r"both|same|either|neither|different|also|common|compared?)\b",
        re.I,
    ),
    relating_re=re.compile(r"\b(both|same|common|either|neither|compared?|different)\b", re.I),
    comparison_link_re=re.compile(r"\b(or|than)\b"),
    trailing_choice_re=re.compile(r"^(which|who|whom|whose|what)\b.*\bor\b[^,;:]*\?*\s*$"),
    choice_or_re=re.compile(r"\bor\b"),
    choice_exclusion_re=re.compile(r"\bboth\b|\bsame\b"),
    choice_opening_re=re.compile(r"^(which|who|what)\b"),
    or_split_re=re.compile(r"\s+or\s+"),
    choice_options_re=re.compile(r"[,:]?\s*([^,:?]+?)\s+or\s+([^,?]+?)\s*\?*\s*$"),
    date_answer_re=re.compile(
        r"\b(when|what year|which year|what date|which date|what decade|what century|born on)\b"
    ),
    number_answer_re=re.compile(
        r"\bhow (many|much|old|long|tall|far|large|big|high)\b"
        r"|\bwhat (number|percentage|population|age)\b"
    ),
    place_answer_re=re.compile(
        r"\b(where|what (city|country|state|town|county|place|region|continent|island|location))\b"
        r"|\bwhich (city|country|state|town|county|place|region|continent|island)\b"
        r"|\bin what (city|country|state|town)\b"
    ),
    person_answer_re=re.compile(
        r"\b(who|whom|whose)\b|\bwhich (person|actor|actress|director|author|writer|player|"
        r"singer|musician|president|man|woman)\b"
    ),
    date_question_re=re.compile(
        r"\b(?:when|what year|which year|what date|which date|what decade|what century|"
        r"in what year|born on|first|earlier|earliest|later|latest|older|oldest|younger|"
        r"youngest|founded|established|released)\b"
    ),
    number_question_re=re.compile(
        r"\bhow (?:many|much|old|long|tall|far|large|big|high)\b|"
        r"\b(?:number|percentage|population|age|more|most|fewer|fewest|larger|largest|bigger|"
        r"biggest|higher|highest|taller|tallest|longer|longest|numerous)\b"
    ),
    attribute_nouns=_ATTRIBUTE_NOUNS,
    determiners=_DETERMINERS,
    described_determiners=_w("the a an this these those its his her their"),
    relative_words=_w("who whom whose which that where when"),
    relative_after_preposition=_w("which whom"),
    asked_phrase_breaks=_w("that whose"),
    nesting_prepositions=_w("in on at to for from with by of after under into during"),
    question_prepositions=_w(
        "in on at for from to by with of under during within after before since until into through"
    ),
    of_words=_w("of"),
    same_words=_w("same"),
    as_words=_w("as"),
    predicate_words=_w("as be been"),
    copulas=_COPULAS,
    auxiliaries=_COPULAS | _w("has had have did does do"),
    asking_auxiliaries=_w(
        "is are was were do does did has have had be been must can could will would should "
        "shall may might"
    ),
    complement_heads=_w(
        "so such now given provided except fact indicate indicates state states stated "
        "mention mentions say says said claim claims require requires provide provides "
        "specify specifies ensure agree agrees acknowledge acknowledges know believe think "
        "show shows mean means imply implies confirm confirms note declare declares "
        "stipulate stipulates suggest suggests prove report reported clear true likely "
        "possible sure aware"
    ),
    property_suffixes=(
        "ment",
        "tion",
        "sion",
        "ness",
        "ity",
        "ance",
        "ence",
        "ing",
        "ism",
        "ship",
        "ure",
    ),
    property_heads=_PROPERTY_HEADS | _REPORTED_HEADS,
    value_heads=_PROPERTY_HEADS | _w("birth death name"),
    composed_kin=_w(
        "uncle aunt nephew niece cousin grandfather grandmother grandson granddaughter "
        "grandchild grandparent grandchildren grandparents"
    ),
    composed_kin_suffixes=("-in-law",),
    clause_subjects=_w("he she it they we you i there one"),
    naming_nouns=_w("name title identity"),
    wh_opening_re=re.compile(
        r"^\s*(?:(?:in|on|at|for|from|to|by|with|of|under|during)\s+)?(?:which|what)\s+", re.I
    ),
    head_after_re=re.compile(r"^[\s-]*(?:based\s+|born\s+)?([a-z][\w-]*)"),
    # -- answer kinds and comparisons ------------------------------------------------------
    person_heads=_w(
        "person people man woman actor actress director author writer player singer musician "
        "president artist composer producer leader chair founder ceo manager member "
        "politician poet coach commander captain host presenter"
    ),
    organization_heads=_w(
        "team group company organisation organization firm band club party agency department "
        "university college school committee guild council board corporation business "
        "network label studio publisher brand bank charity union"
    ),
    place_heads=_w(
        "city country state town county place region continent island location village "
        "province district neighbourhood neighborhood capital venue"
    ),
    time_heads=_w("year date month day decade century time season era"),
    quantity_heads=_w("number percentage percent population age count total size"),
    amount_heads=_w(
        "amount stipend salary price cost fee revenue income profit budget payment wage "
        "funding investment fine valuation"
    ),
    negations=_w("not no never neither nor none nobody nothing without cannot"),
    negation_suffixes=("n't",),
    early_re=re.compile(
        r"\b(earlier|earliest|first|older|oldest|before|longer ago|sooner)\b", re.I
    ),
    late_re=re.compile(
        r"\b(later|latest|last|younger|youngest|after|(?:more|most) recent(?:ly)?|newer|newest)\b",
        re.I,
    ),
    lifespan_re=re.compile(
        r"\blived (longer|shorter)\b|\b(longer|shorter) (life|lifespan)\b|"
        r"\blived to an? (older|greater|younger) age\b|\bdied (older|younger)\b",
        re.I,
    ),
    more_re=re.compile(
        r"\b(more|most|larger|largest|bigger|biggest|higher|highest|greater|longer|taller)\b",
        re.I,
    ),
    less_re=re.compile(r"\b(less|least|fewer|smaller|smallest|lower|lowest|shorter)\b", re.I),
    older_re=re.compile(r"\b(older|greater)\b"),
    same_re=re.compile(r"\b(same|identical|shared?)\b", re.I),
    all_re=re.compile(r"\b(both|all|each|either)\b", re.I),
    role_of_re=re.compile(r"\bthe\s+([\w-]+)\s+of\s+(?:the\s+)?$"),
    # -- roles, gaps and queries -------------------------------------------------------------
    # Comparative words that say a comparison compares dates ("Which opened first, X or
    # Y?", "Which film was released more recently?", "Who lived longer?", "launched in
    # the same year?").
    date_comparative_re=re.compile(
        r"\b(older|oldest|younger|youngest|earlier|earliest|first|later|latest|before|after|"
        r"sooner|newer|newest|(?:more|most|less|least) recent(?:ly)?|lived (?:longer|shorter)|"
        r"(?:same|different) (?:year|decade|century|month|day|date))\b",
        re.I,
    ),
    # A comparative before a plural noun compares counts ("more engineers", "fewer
    # members"); before an adjective it does not ("more famous", "more popular").
    count_comparative_re=re.compile(
        r"\b(?:more|fewer|most|fewest)\s+(?!\w+(?:ous|ss|is)\b)[a-z]+s\b", re.I
    ),
    # "has the director who", "whose composer", "the performer of": the compared value
    # sits one hop away.
    related_role_re=re.compile(
        r"\b(?:has|have|had|with)\s+the\s+[a-z]+\s+(?:who|that|born|died|of)\b"
        r"|\bwhose\s+[a-z]+\s+(?:was|is|were|died|born)\b"
        r"|\b(?:as|than)\s+the\s+[a-z]+\s+of\b"
        # "Who joined earlier, the lead of the X or the lead of the Y?": each option
        # is a role of a named entity.
        r"|\bthe\s+[a-z]+\s+of\s+(?:the\s+)?(?-i:[A-Z])[^,?]*\bor\s+the\s+[a-z]+\s+of\b",
        re.I,
    ),
    role_patterns=(
        re.compile(
            r"\b(?:the|a|an|its|his|her|their)\s+(?:[a-z]+\s+)?([a-z]+)\s+(?:of|who|whose|that|which)\b",
            re.I,
        ),
        re.compile(r"['’]s\s+([a-z]+)\b", re.I),
        re.compile(r"\bwhose\s+([a-z]+)\b", re.I),
    ),
    agent_roles=_w(
        "author writer creator composer director painter artist producer founder designer "
        "architect developer inventor sculptor photographer illustrator lyricist songwriter "
        "singer performer"
    ),
    by_words=_w("by"),
    anaphora_re=re.compile(
        r"^\W*(?:he|she|it|they|his|her|its|their|him|them|this|these|those|there|"
        r"the (?:band|group|film|album|song|company|city|town|team|club|show|series|book|game|"
        r"station|school|university|river|building|party|magazine|newspaper|novel|species|"
        r"latter|former)|both|also|however|later|in addition)\b",
        re.IGNORECASE,
    ),
    pointer_words=_w(
        "see read visit refer learn check click go continue next previous back return edit "
        "view share subscribe download follow"
    ),
    qualifier_query_words=MappingProxyType(
        {"date": "date year", "number": "number", "place": "place location"}
    ),
    asking_word_leads=_w("and but so until till since"),
    former_words=_w("first former previous original founding earlier late ex then"),
    departure_words=_w(
        "left leaves retired retires resigned resigns departed departs quit quits died dies "
        "stepped steps handed hands"
    ),
    past_question_words=_w(
        "did was were had used first former formerly originally previous previously initially "
        "once founding"
    ),
    conjunctions=_w("that"),
    holder_verbs=_w("served serves acted acts became becomes remained remains stayed"),
    entity_year_re=re.compile(
        r"^\.?(?:['’]s)?,?\s*(?:(?:in|for|during|of|from|at the end of)\s+(?:the\s+)?"
        r"(?:(?:fiscal|financial|calendar)\s+)?(?:year\s+)?)?((?:19|20)\d{2})\b"
    ),
    periods=PERIODS,
    reader=ReaderWords(
        version_heads=_w("version versions release releases"),
        number_heads=_w("code codes port ports"),
        code_heads=_w(
            "decorator function method class parameter argument option setting variable "
            "header attribute field module package library command flag key property keyword "
            "exception endpoint"
        ),
        time_units=_w(
            "millisecond milliseconds ms second seconds sec secs minute minutes min mins hour "
            "hours day days week weeks month months year years"
        ),
        measure_units=_w("byte bytes kb mb gb tb kib mib gib tib ms px percent"),
        duration_words=_w("long often"),
        default_words=_w("default defaults"),
        subject_pronouns=_w("i we you they he she it one"),
        condition_words=_w("if when unless whenever while once after before since"),
        # "Defaults to `500`", "Default: 2", "(default: `auto`)", "the default is 30".
        default_re=re.compile(
            r"\b(?:defaults? (?:to|is|value is)|default(?: value)?:|default =)\s*"
            r"(`[^`\n]+`|\"[^\"\n]*\"|'[^'\n]*'|[^\s,;()]+(?: (?:"
            r"seconds?|minutes?|hours?|days?|bytes?|[kKmMgG]i?B))?)",
            re.IGNORECASE,
        ),
        procedure_re=re.compile(
            r"^\s*(?:how (?:do|can|could|should|would|may|might) (?:i|we|you|one)\b|how to\b)",
            re.IGNORECASE,
        ),
        part_split_re=re.compile(rf"[,;]\s*(?:and|but|or)\s+(?=(?:{_ASKING_OPENERS})\b)", re.I),
        # Only relations a sentence states in other words with the same meaning; words
        # with a second, unrelated sense ("ship", "run", "found") are left out.
        synonyms=(
            ("launch", "go live", "went live", "gone live", "goes live", "roll out", "debut"),
            ("add", "introduce"),
            ("remove", "drop"),
            ("acquire", "buy", "purchase"),
            ("establish", "set up", "incorporate"),
        ),
    ),
)
"""The English lexicon (the default of :func:`sealgraph.text.lexicon.active`)."""
