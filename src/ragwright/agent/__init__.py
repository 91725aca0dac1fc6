"""Agentic RAG: a tool-calling loop over read-only tools, with hard caps and a trajectory.

* :mod:`~ragwright.agent.options` — :class:`AgentOptions` (rounds, tool calls, cl100k tokens …);
* :mod:`~ragwright.agent.tools` — the tools, bound to the caller's identity outside the model;
* :mod:`~ragwright.agent.calculator` — arithmetic through :mod:`ast`, no ``eval``;
* :mod:`~ragwright.agent.actions` — JSON actions (the local model's grammar) and native tool calls;
* :mod:`~ragwright.agent.loop` — the loop (after Yao et al. 2023, ReAct), its caps and its endings.

Wired onto a Rag by :func:`ragwright.rag_agent.enable_agent` (``ragwright ask --agent``).
"""

from ragwright.agent.loop import AgentLoop, ToolChatModel
from ragwright.agent.options import AgentOptions
from ragwright.agent.tools import AgentTools, Evidence

__all__ = ["AgentLoop", "AgentOptions", "AgentTools", "Evidence", "ToolChatModel"]
