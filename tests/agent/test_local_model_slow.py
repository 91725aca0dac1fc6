"""The agent on the real local model (Qwen2.5-Coder-0.5B, extra ``llm-small``): every turn decodes under the
action grammar, so every turn is a valid action, and the loop ends within its caps."""

from __future__ import annotations

import pytest

from ragwright.agent import AgentOptions
from ragwright.agent.actions import ACTIONS
from ragwright.models.llms import load_chat
from ragwright.rag import Rag
from ragwright.rag_agent import enable_agent
from tests.agent.conftest import ACME

pytestmark = pytest.mark.slow  # needs the llm-small extra (the test extra installs it)


def test_the_local_model_acts_through_the_grammar(rag: Rag) -> None:
    llm = load_chat("local:0.5b", n_ctx=4096)
    assert llm is not None
    opts = AgentOptions(max_rounds=2, max_tool_calls=3)
    response = enable_agent(rag, opts, llm=llm).ask("Where does the director of Big Stone Gap live?", identity=ACME)
    tools = [s["tool"] for s in response.trajectory]
    assert "invalid" not in tools and set(tools) <= {*ACTIONS, "stop"}  # the grammar held every turn
    assert response.usage["rounds"] <= 2 and response.usage["tool_calls"] <= 3
    assert response.usage["llm_calls"] <= 3  # two tool turns and at most one last answer turn
    assert response.sources and all(r.chunk.tenant == "acme" for r in response.sources)
    assert response.declined or response.citations or response.uncited
