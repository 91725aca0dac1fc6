"""Answer generation: from retrieved sources to a cited answer, or an honest decline.

``extractive`` quotes supporting sentences (no model needed); ``llm_answer`` asks a chat model under the
prompt contract of ``prompt``, checks its citations (``citations``), optionally verifies groundedness
(``verify``) and streams (``stream``).
"""

from ragwright.generate.extractive import ExtractiveAnswerer
from ragwright.generate.llm_answer import LlmAnswerer
from ragwright.generate.prompt import DECLINE_SENTENCE, DEFAULT_SYSTEM_PROMPT, PromptObserver, build_messages
from ragwright.generate.stream import AnswerStream, AsyncAnswerStream

__all__ = [
    "DECLINE_SENTENCE",
    "DEFAULT_SYSTEM_PROMPT",
    "AnswerStream",
    "AsyncAnswerStream",
    "ExtractiveAnswerer",
    "LlmAnswerer",
    "PromptObserver",
    "build_messages",
]
