"""Chat models: the seam (:mod:`.base`) and its backends, built from short specs by :func:`load_chat`.

* :class:`~ragwright.models.llms.local.LlamaCppChat` — the offline GGUF model on llama.cpp (extra
  ``llm`` for Qwen2.5-Coder-1.5B, ``llm-small`` for 0.5B; assembled once into the cache);
* :class:`~ragwright.models.llms.openai_compat.OpenAICompatChat` — any OpenAI-compatible server;
* :class:`ragwright.testing.doubles.ScriptedChat` — the scripted double for tests.

Importing this package is cheap: backends load lazily (module ``__getattr__``), weights on first use.
"""

from __future__ import annotations

import importlib
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ragwright.errors import ConfigError
from ragwright.models.llms.base import (
    ChatLedger,
    ChatModel,
    ChatResponse,
    Message,
    Usage,
    YesNoScorer,
    as_messages,
    parse_json,
)

if TYPE_CHECKING:
    from ragwright.models.llms.local import LlamaCppChat
    from ragwright.models.llms.openai_compat import OpenAICompatChat

__all__ = [
    "ChatLedger",
    "ChatModel",
    "ChatResponse",
    "LlamaCppChat",
    "Message",
    "OpenAICompatChat",
    "Usage",
    "YesNoScorer",
    "as_messages",
    "load_chat",
    "parse_json",
]

_LAZY = {"LlamaCppChat": "ragwright.models.llms.local", "OpenAICompatChat": "ragwright.models.llms.openai_compat"}
_OFF = ("none", "off", "")
_LOCAL = {"local": "1.5b", "local:1.5b": "1.5b", "local:0.5b": "0.5b"}
ACCEPTED = (
    "'none' (no LLM), 'local' or 'local:1.5b' (Qwen2.5-Coder-1.5B, pip install 'ragwright[llm]'), "
    "'local:0.5b' (Qwen2.5-Coder-0.5B, pip install 'ragwright[llm-small]'), the path of a .gguf file, "
    "or 'openai:MODEL' / 'openai:MODEL@BASE_URL' for an OpenAI-compatible server "
    "(base URL and key otherwise from RAGWRIGHT_LLM_BASE_URL and RAGWRIGHT_LLM_API_KEY / OPENAI_API_KEY)"
)


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def load_chat(spec: str | os.PathLike[str] | None, **options: Any) -> ChatModel | None:
    """Build a chat model from a short spec (see :data:`ACCEPTED`); ``None``/``"none"`` → ``None``.

    ``options`` go to the backend (``n_ctx``, ``n_threads``, ``temperature``, ``max_tokens`` …).
    The local models are assembled into the cache on the first call (a few seconds, once); their
    weights load on first use. Unknown specs raise :class:`ConfigError` listing the accepted values.
    """
    if spec is None:
        return None
    if isinstance(spec, os.PathLike):
        spec = os.fspath(spec)
    if not isinstance(spec, str):
        raise ConfigError.invalid("llm", spec, ACCEPTED)
    key = spec.strip()
    if key.lower() in _OFF:
        return None
    if key.lower() in _LOCAL:
        from ragwright.models.llms.gguf import gguf_path
        from ragwright.models.llms.local import LlamaCppChat

        return LlamaCppChat(gguf_path(_LOCAL[key.lower()]), **options)
    if key.lower().startswith("openai:"):
        from ragwright.models.llms.openai_compat import OpenAICompatChat

        model, _, base_url = key[len("openai:") :].partition("@")
        if not model.strip():
            raise ConfigError.invalid("llm", spec, ACCEPTED)
        return OpenAICompatChat(model.strip(), base_url=base_url.strip() or None, **options)
    if key.lower().endswith(".gguf"):
        path = Path(key).expanduser()
        if not path.is_file():
            raise ConfigError.invalid("llm", spec, f"no GGUF file there; {ACCEPTED}")
        from ragwright.models.llms.local import LlamaCppChat

        return LlamaCppChat(path, **options)
    raise ConfigError.invalid("llm", spec, ACCEPTED)
