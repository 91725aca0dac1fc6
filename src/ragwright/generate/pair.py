"""A signal that reads the question and the evidence together: the chat model's yes/no judgement.

The lexical answerability model (:mod:`ragwright.generate.answerability`) sees coverage, constraints
and similarities; it cannot read that "the first Norman king" is not "the last", or that a sentence
says something *about* the asked entity without answering. A model that reads the pair can. No PyPI
package ships a cross-encoder's weights, so the pair reader is the chat
model itself: **P(yes) of "does this passage answer the question?"** from the next-token logits of one
forward pass (:class:`~ragwright.models.llms.base.YesNoScorer`, the local llama.cpp model), over the
best evidence unit and its neighbours — a short passage (about 150 tokens), not the whole prompt.

It joins the lexical model's logit in a **stacked** two-feature logistic model (``lex_logit``,
``pair_logit``), one per chat model (P(yes) of different models sit on different scales), trained by
``tools/pair_signal.py`` on the training articles and stored in ``pair_models.json`` beside this
module. With no weights for the configured model the gate stays lexical (``answerability_pair_skipped``
is logged), so nothing changes for a model it was not trained on.
"""

from __future__ import annotations

import functools
import json
import math
from collections.abc import Mapping
from importlib import resources
from typing import TYPE_CHECKING, Any, Final

from ragwright.errors import ConfigError
from ragwright.models.llms.base import Message

if TYPE_CHECKING:
    from ragwright.generate.answerability import LogisticModel
    from ragwright.generate.evidence import Evidence
    from ragwright.models.llms.base import YesNoScorer

PAIR_FILE: Final = "pair_models.json"
PAIR_FEATURES: Final = ("lex_logit", "pair_logit")
PAIR_SYSTEM: Final = "You check whether a passage answers a question. Answer with one word: yes or no."
PAIR_USER: Final = (
    "Passage: {passage}\n\nQuestion: {question}\n\n"
    "Does the passage state the answer to this exact question? Answer yes or no."
)
MAX_PASSAGE_TOKENS: Final = 320


def passage(ev: Evidence, i: int) -> str:
    """Unit *i* with its neighbours in the same source (a table row with its context line first)."""
    unit = ev.units[i]
    texts = [ev.units[j].text for j in ev.window(i)]
    if unit.context:
        texts.insert(0, unit.context)
    return " ".join(texts)


def prompt(scorer: YesNoScorer, question: str, text: str) -> str:
    """The formatted yes/no prompt (the passage cut to :data:`MAX_PASSAGE_TOKENS` of the model's tokens)."""
    text = scorer.truncate(text, MAX_PASSAGE_TOKENS)
    messages = [Message("system", PAIR_SYSTEM), Message("user", PAIR_USER.format(passage=text, question=question))]
    return scorer.format_chat(messages)


def pair_probability(scorer: YesNoScorer, ev: Evidence) -> float | None:
    """P(yes) that the best unit and its neighbours answer the question; ``None`` without a best unit."""
    best = ev.best
    if best is None:
        return None
    return scorer.yes_probabilities([prompt(scorer, ev.question.text, passage(ev, best))])[0]


def logit(p: float) -> float:
    p = min(max(p, 1e-6), 1 - 1e-6)
    return math.log(p / (1 - p))


def stacked_features(lexical_probability: float, pair_yes: float) -> dict[str, float]:
    return {"lex_logit": logit(lexical_probability), "pair_logit": logit(pair_yes)}


def load_pair_models(path: str | None = None) -> dict[str, LogisticModel]:
    """Stacked models by chat-model name (the shipped ``pair_models.json`` unless *path*)."""
    from ragwright.generate.answerability import LogisticModel

    if path is None:
        entry = resources.files("ragwright.generate").joinpath(PAIR_FILE)
        if not entry.is_file():
            return {}
        text = entry.read_text(encoding="utf-8")
    else:
        with open(path, encoding="utf-8") as fh:
            text = fh.read()
    try:
        data: Mapping[str, Any] = json.loads(text)
    except ValueError as exc:
        raise ConfigError(f"pair answerability weights are not valid JSON: {exc}") from exc
    models = {name: LogisticModel.from_dict(spec) for name, spec in data.items()}
    for name, m in models.items():
        if set(m.features) - set(PAIR_FEATURES):
            raise ConfigError(f"pair answerability weights for {name}: unknown features {sorted(m.features)}")
    return models


@functools.cache
def _shipped() -> dict[str, LogisticModel]:
    return load_pair_models()


def pair_model(model_name: str) -> LogisticModel | None:
    """The shipped stacked model for the chat model *model_name*, or ``None`` (not trained for it)."""
    return _shipped().get(model_name)
