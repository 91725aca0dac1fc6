"""What the rules read in a question: surface features, each a documented pattern, no model.

Every feature is ``None`` when absent, else the text that matched (it goes into the route's reason):

* ``chitchat`` — the whole message is a greeting (``hi``, ``good morning``), thanks (``thanks a lot``),
  a farewell (``bye``), small talk (``how are you?``) or a question about the assistant itself (``who are
  you?``, ``what can you do?``). Every sentence of the message must be one: ``hi, what is the notice
  period?`` is a question. The value is the kind (``greeting``, ``thanks``, ``farewell``, ``small_talk``,
  ``about_assistant``).
* ``corpus_scope`` — the question is about the whole collection: ``main/key/common themes|topics|trends``,
  ``summarise everything|all documents``, ``across all documents``, ``what is this collection about``.
* ``document_scope`` — about whole documents: ``which documents|reports|contracts …``, ``summarise the
  report``, ``what is this paper about``.
* ``arithmetic`` — a computation or aggregation over found values: ``how many more``, ``in total``,
  ``combined``, ``average``, ``percentage of``, ``how many years (apart|after|before|between)``,
  ``how old was … when``, numbers joined by an operator.
* ``comparison`` — two things weighed: ``compare``, ``versus``, ``difference(s) between``, ``both``,
  ``the same`` (``of the same nationality``), or a choice (`` or ``) with a comparative or an ordering
  word (``older``, ``more``, ``first``: ``which was founded first, X or Y?``), or a question ending in a
  choice (``which company is based in Kentucky, Vocelli Pizza or Fazoli's?``).
* ``multi_part`` — several questions in one: two question marks, or ``… and what|who|when …``.
* ``relational`` — how things relate: ``relationship|connection between``, ``how is X related|connected
  to Y``.
* ``multi_hop`` — a bridge through an unnamed entity: a relative clause on a noun phrase inside the
  question (``the woman who portrayed …``, ``the film in which …``), or ``the X of the Y`` with a role
  noun ``X`` (``the director of the film …``; light nouns such as ``name``, ``number``, ``type`` do not
  count), a reduced relative clause (``the adaptation written by …``, not ``was written by``; ``the film
  starring …``), or a possessive chain (``X's father's …``).

The multi-step features (``arithmetic`` to ``multi_hop``) are read in questions only: a message that
opens with a question word, an auxiliary or an imperative, or ends with ``?``. A statement (a claim to
check, keywords) is one search whatever its words: ``X is more effective compared to Y`` is a claim.

``form`` is the question form (the first word: ``what``, ``who`` … ``yes_no`` for an auxiliary,
``imperative`` for ``list``/``summarise``/``explain`` …, ``statement`` otherwise) and ``words`` the word count.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Final

_WORD = re.compile(r"[^\W_]+(?:'[^\W_]+)?", re.UNICODE)
_SENTENCES = re.compile(r"[.!?;,:\n]+")

_POLITE = r"(?:\s+(?:there|all|everyone|folks|team|again|bot|assistant|friend|mate|so much|very much|a lot|a bunch))*"
_CHITCHAT: Final[tuple[tuple[str, re.Pattern[str]], ...]] = (
    (
        "greeting",
        re.compile(
            r"(?:hi|hello|hey|hiya|howdy|yo|greetings|good (?:morning|afternoon|evening|day)|hallo|bonjour|hola)"
            + _POLITE
        ),
    ),
    (
        "thanks",
        re.compile(
            r"(?:(?:ok|okay|great|perfect|nice|awesome|cool|brilliant|excellent|wonderful)\s+)?"
            r"(?:thanks|thank you|thx|ty|cheers|many thanks|much appreciated|appreciate it)"
            + _POLITE
            + r"(?:\s+for (?:your|the|all the|all your) (?:help|answer|answers|assistance|info|information|time))?"
        ),
    ),
    (
        "farewell",
        re.compile(r"(?:bye|goodbye|good bye|bye bye|see you(?: later| soon)?|see ya|good night|farewell)" + _POLITE),
    ),
    (
        "small_talk",
        re.compile(
            r"how are you(?: doing)?(?: today)?|how is it going|how's it going|what's up|whats up|nice to meet you|"
            r"ok|okay|cool|great|nice|awesome|got it|i see|sure|yes|no|lol|haha|good|fine|perfect"
        ),
    ),
    (
        "about_assistant",
        re.compile(
            r"(?:who|what) are you|what (?:can|do) you do|what is your name|what's your name|whats your name|"
            r"are you (?:a |an )?(?:bot|robot|human|ai|person|real|chatbot|machine)|"
            r"how do you work|how does this (?:work|assistant work|bot work)|what can i ask(?: you)?|"
            r"can you help(?: me)?|help|tell me about yourself|introduce yourself"
        ),
    ),
)

_CORPUS_SCOPE = re.compile(
    r"\b(?:main|key|major|common|recurring|overall|central|dominant|principal|general) "
    r"(?:themes?|topics?|trends?|ideas|issues|risks|findings|subjects|patterns)\b"
    r"|\bwhat (?:themes|topics|subjects) (?:are|do|does)\b"
    r"|\b(?:summar(?:y|ise|ize)|overview|gist)\b.{0,40}\b(?:everything|all (?:the )?(?:documents|docs|files|sources|"
    r"reports|data|texts)|the (?:whole|entire) (?:corpus|collection|dataset|knowledge base)|the (?:corpus|collection|"
    r"dataset|knowledge base))\b"
    r"|\b(?:across|throughout|in) (?:all|the whole|the entire|every) (?:of )?(?:the )?(?:documents?|docs|files|"
    r"corpus|collection|sources|reports|texts|data)\b"
    r"|\beverything (?:about|on|regarding|we know about)\b"
    r"|\bwhat (?:is|are) (?:this|the|these) (?:corpus|collection|dataset|knowledge base|documents|docs) about\b",
    re.I,
)
_DOC_NOUNS = (
    r"(?:documents?|docs?|files?|reports?|papers?|articles?|contracts?|polic(?:y|ies)|pages?|books?|chapters?|"
    r"sections?|manuals?|memos?|studies|study)"
)
_DOCUMENT_SCOPE = re.compile(
    r"\b(?:which|what) " + _DOC_NOUNS + r"\b"
    r"|\b(?:summar(?:y|ise|ize)|overview|outline|gist)\b (?:of )?(?:the|this|that|each|every) (?:[\w-]+ ){0,2}"
    + _DOC_NOUNS
    + r"\b"
    r"|\bwhat (?:is|does) (?:the|this|that) " + _DOC_NOUNS + r" (?:about|cover|conclude)\b",
    re.I,
)
_ARITHMETIC = re.compile(
    r"\bhow (?:many|much) (?:more|fewer|less|times|longer|shorter|older|younger|bigger|larger|smaller|higher|lower)\b"
    r"|\b(?:in total|combined(?! with)|altogether|added together|sum of|average|on average|"
    r"total (?:number|amount|revenue|cost|costs|sales|population|count|value|sum|of)|"
    r"median|percentage of|what percent(?:age)?|ratio of|calculate|compute|add up)\b"
    r"|\bhow many (?:years|months|days|decades|centuries) (?:apart|after|before|between|separate|passed|elapsed)\b"
    r"|\bhow (?:long|many years) (?:after|before)\b"
    r"|\bhow old (?:was|were|is|will) .{1,60}\bwhen\b"
    r"|(?<![\w/.-])\d+(?:\.\d+)?\s*[+*×÷]\s*\d+(?![\w/])"
    r"|\b(?:twice|three times|half) as\b",
    re.I,
)
_COMPARATIVE = (
    r"(?:older|younger|larger|smaller|bigger|taller|shorter|longer|earlier|later|first|last|more|most|less|least|"
    r"fewer|higher|lower|newer|better|worse|closer|farther|further|faster|slower|heavier|lighter|greater|"
    r"oldest|youngest|largest|smallest|biggest|tallest|earliest|latest|highest|lowest|newest|best|worst|\w+er than)"
)
_COMPARISON = re.compile(
    r"\b(?:compare|comparison|compared|versus|vs\.?)\b"
    r"|\b(?:differences?|similarit(?:y|ies)|distinction) (?:between|of)\b"
    r"|\b(?:both|neither)\b"
    r"|\bthe same\b"
    r"|\b" + _COMPARATIVE + r"\b.{0,80}\bor\b"
    r"|\bor\b.{0,80}\b" + _COMPARATIVE + r"\b"
    r"|\b(?:which|who|whose|what)\b[^?]*,\s*[^,?]{2,60}\s+or\s+[^,?]{2,60}\??$"
    r"|\b(?:which|who)\b[^?]{0,60}\b(?:and|or)\b[^?]{0,60}\b(?:is|was|were|are|has|had)\b[^?]{0,20}\b"
    + _COMPARATIVE
    + r"\b",
    re.I,
)
_MULTI_PART = re.compile(r"\?[^?]*\w[^?]*\?|\b(?:and|also|then) (?:what|who|whom|when|where|why|how|which)\b", re.I)
_RELATIONAL = re.compile(
    r"\b(?:relationship|relation|connection|link|relations|ties) (?:between|of .{1,60} (?:to|with))\b"
    r"|\bhow (?:is|are|was|were|did|do|does) .{1,80}\b(?:related|connected|linked|tied) (?:to|with)\b"
    r"|\bwhat (?:connects|links|relates)\b",
    re.I,
)
#: Nouns too light to make ``the X of the Y`` a bridge (``the name of the river`` is one lookup).
_LIGHT = frozenset(
    [
        "name",
        "names",
        "number",
        "numbers",
        "type",
        "types",
        "kind",
        "kinds",
        "sort",
        "part",
        "parts",
        "rest",
        "end",
        "beginning",
        "start",
        "top",
        "bottom",
        "middle",
        "center",
        "centre",
        "size",
        "amount",
        "use",
        "uses",
        "purpose",
        "meaning",
        "title",
        "date",
        "year",
        "years",
        "value",
        "role",
        "effect",
        "effects",
        "cause",
        "causes",
        "result",
        "results",
        "form",
        "forms",
        "lot",
        "majority",
        "percentage",
        "some",
        "many",
        "most",
        "all",
        "each",
        "one",
        "two",
        "three",
        "first",
        "last",
        "half",
        "area",
        "population",
        "length",
        "height",
        "age",
    ]
)
_RELATIVE_ON_NOUN = re.compile(
    r"\b(?:the|a|an|this|that|these|those|his|her|its|their)\s+(?:[\w'-]+\s+){0,3}?[\w'-]+\s+"
    r"(?:(?:in|on|at|from|by|for|with|of|to|during|under) )?(?:who|whom|whose|which|that|where)\s+\w+",
    re.I,
)
_PARTICIPLE = re.compile(
    r"(?<!\bwas )(?<!\bwere )(?<!\bis )(?<!\bare )(?<!\bbeen )(?<!\bbe )(?<!\bhas )(?<!\bhave )(?<!\bhad )"
    r"\b(?:written|directed|produced|founded|created|owned|developed|designed|composed|hosted|coached|led|managed|"
    r"sung|performed|played|voiced|portrayed|invented|discovered|built|published|released) by\b"
    r"|\b(?:starring|featuring|which stars)\b",
    re.I,
)
_OF_CHAIN = re.compile(r"\bthe\s+((?:[\w'-]+\s+){0,2}?[\w'-]+)\s+of\s+(?:the|a|an|this|that)\s+\w+", re.I)
_POSSESSIVE_CHAIN = re.compile(r"\b\w+'s\s+(?:\w+\s+){0,2}?\w+'s\b|\b\w+'s\s+\w+\s+of\b", re.I)

_AUXILIARIES = frozenset(
    [
        "is",
        "are",
        "was",
        "were",
        "do",
        "does",
        "did",
        "can",
        "could",
        "will",
        "would",
        "should",
        "has",
        "have",
        "had",
        "may",
        "might",
        "must",
        "shall",
    ]
)
_IMPERATIVES = frozenset(
    [
        "list",
        "summarise",
        "summarize",
        "explain",
        "describe",
        "tell",
        "give",
        "show",
        "name",
        "find",
        "compare",
        "outline",
        "define",
    ]
)
_WH = frozenset(["what", "who", "whom", "whose", "which", "when", "where", "why", "how"])


@dataclass(frozen=True, slots=True)
class Features:
    """The surface features of one question (see the module docstring); ``None`` = absent."""

    form: str
    words: int
    chitchat: str | None = None
    corpus_scope: str | None = None
    document_scope: str | None = None
    arithmetic: str | None = None
    comparison: str | None = None
    multi_part: str | None = None
    relational: str | None = None
    multi_hop: str | None = None

    def present(self) -> dict[str, str]:
        """The features found, by name, with what matched."""
        names = (
            "chitchat",
            "corpus_scope",
            "document_scope",
            "arithmetic",
            "comparison",
            "multi_part",
            "relational",
            "multi_hop",
        )
        return {n: v for n in names if (v := getattr(self, n)) is not None}


def _normal(text: str) -> str:
    return " ".join(text.lower().replace("’", "'").split())


def chitchat_kind(text: str) -> str | None:
    """The kind of chit-chat when every sentence of *text* is chit-chat, else ``None``."""
    parts = [" ".join(_WORD.findall(p)) for p in _SENTENCES.split(_normal(text))]
    parts = [p for p in parts if p]
    if not parts or len(parts) > 4:
        return None
    kinds: list[str] = []
    for part in parts:
        kind = next((k for k, pattern in _CHITCHAT if pattern.fullmatch(part)), None)
        if kind is None:
            return None
        kinds.append(kind)
    # a question about the assistant outranks the greeting that opened it ("hi, who are you?")
    for preferred in ("about_assistant", "thanks", "farewell", "greeting", "small_talk"):
        if preferred in kinds:
            return preferred
    return kinds[0]  # pragma: no cover - every kind is listed above


def _form(words: list[str]) -> str:
    if not words:
        return "statement"
    first = words[0]
    if first in _WH:
        return first
    if first in _AUXILIARIES:
        return "yes_no"
    if first in _IMPERATIVES:
        return "imperative"
    return "statement"


def _match(pattern: re.Pattern[str], text: str) -> str | None:
    found = pattern.search(text)
    return found.group(0).strip() if found else None


def _multi_hop(text: str) -> str | None:
    for found in _RELATIVE_ON_NOUN.finditer(text):
        if found.start() > 0:  # inside the question, not its opening "What …"
            return found.group(0).strip()
    for found in _OF_CHAIN.finditer(text):
        head = found.group(1).split()[-1].lower()
        if head not in _LIGHT:
            return found.group(0).strip()
    return _match(_PARTICIPLE, text) or _match(_POSSESSIVE_CHAIN, text)


def extract(question: str) -> Features:
    """The :class:`Features` of *question*."""
    text = _normal(question)
    words = [w for w in _WORD.findall(text)]
    kind = chitchat_kind(question)
    if kind is not None:
        return Features(form=_form(words), words=len(words), chitchat=kind)
    form = _form(words)
    scope = {
        "corpus_scope": _match(_CORPUS_SCOPE, text),
        "document_scope": _match(_DOCUMENT_SCOPE, text),
    }
    if form == "statement" and not text.rstrip().endswith("?"):
        return Features(form=form, words=len(words), **scope)  # a claim or keywords: one search
    return Features(
        form=form,
        words=len(words),
        **scope,
        arithmetic=_match(_ARITHMETIC, text),
        comparison=_match(_COMPARISON, text),
        multi_part=_match(_MULTI_PART, text),
        relational=_match(_RELATIONAL, text),
        multi_hop=_multi_hop(text),
    )
