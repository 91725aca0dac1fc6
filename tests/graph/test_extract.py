"""Extractors: every mention and relation grounded in its chunk; the LLM extractor checked with a double."""

import json

from ragwright.graph.llm_extract import MAX_ENTITIES, MAX_RELATIONS, LlmExtractor, complete_items
from ragwright.graph.model import ChunkText, entity_key
from ragwright.graph.rules import RuleExtractor
from ragwright.testing.doubles import ScriptedChat

TEXT = (
    "Apple Inc. was founded by Steve Jobs in Cupertino, California on April 1, 1976. "
    "The European Central Bank (ECB) raised rates by 0.5% to $3 billion. In 2020 the ECB met in Frankfurt.\n"
    "# Installation\nRun the tool. Big Stone Gap is a 2014 film directed by Adriana Trigiani."
)


def test_rule_mentions_are_spans_of_the_chunk() -> None:
    (x,) = RuleExtractor().extract([ChunkText("c", TEXT)])
    assert x.mentions and all(TEXT[m.start : m.end] == m.surface for m in x.mentions)
    found = {(m.surface, m.type) for m in x.mentions}
    assert {("Apple Inc", "ORG"), ("California", "GPE"), ("April 1, 1976", "DATE"), ("$3 billion", "MONEY")} <= found
    assert {("Steve Jobs", "PERSON"), ("Big Stone Gap", "MISC"), ("Adriana Trigiani", "PERSON")} <= found
    assert not any(m.surface in ("Run", "Installation", "The", "In") for m in x.mentions)  # sentence-initial words


def test_rule_relations_and_acronyms() -> None:
    (x,) = RuleExtractor().extract([ChunkText("c", TEXT)])
    relations = {(r.source, r.type, r.target) for r in x.relations}
    assert ("apple", "founded", "steve jobs") in relations
    assert ("big stone gap", "directed", "adriana trigiani") in relations
    assert all(x.chunk_id == "c" and 0 <= r.start < r.end <= len(TEXT) for r in x.relations)
    assert not any("2014" in (r.source, r.target) for r in x.relations)  # values are not graph nodes
    assert [(a.alias, a.key) for a in x.aliases] == [("ecb", "european central bank")]


def test_entity_keys_normalise_names() -> None:
    assert entity_key("The Contoso Ltd.") == "contoso"
    assert entity_key("Arthur’s Magazine") == entity_key("Arthur's Magazine") == "arthur magazine"
    assert entity_key("Bank of England") == "bank of england"


def test_llm_extractor_keeps_only_what_the_chunk_says() -> None:
    text = "Contoso acquired Fabrikam in 2019. Fabrikam makes bikes."
    reply = {
        "entities": [
            {"name": "Contoso", "type": "ORG"},
            {"name": "Fabrikam", "type": "ORG"},
            {"name": "Northwind", "type": "ORG"},  # invented: not in the text
        ],
        "relations": [
            {"source": "Contoso", "target": "Fabrikam", "type": "acquired", "evidence": "Contoso acquired Fabrikam"},
            {"source": "Fabrikam", "target": "Northwind", "type": "owns", "evidence": "Fabrikam makes bikes"},
            {"source": "Fabrikam", "target": "Contoso", "type": "sued", "evidence": "Fabrikam sued Contoso"},
        ],
    }
    chat = ScriptedChat([json.dumps(reply)])
    (x,) = LlmExtractor(chat).extract([ChunkText("c", text)])
    assert {m.surface for m in x.mentions} == {"Contoso", "Fabrikam"}
    assert [(r.source, r.type, r.target, text[r.start : r.end]) for r in x.relations] == [
        ("contoso", "acquired", "fabrikam", "Contoso acquired Fabrikam")
    ]
    assert chat.calls and chat.calls[0].kwargs.get("json_schema") is not None  # the JSON grammar was asked for


def test_llm_extractor_falls_back_to_rules_on_a_bad_reply() -> None:
    extractor = LlmExtractor(ScriptedChat(["not json at all"]))
    (x,) = extractor.extract([ChunkText("c", "Last year Contoso acquired Fabrikam Corp in Berlin.")])
    assert extractor.fallbacks == 1 and {m.key for m in x.mentions} >= {"contoso", "fabrikam"}


def test_llm_extractor_keeps_the_complete_items_of_a_cut_off_reply() -> None:
    # A small model repeats itself inside the JSON grammar until the token cap: the reply is cut mid-item.
    text = "Contoso acquired Fabrikam in 2019 in Berlin."
    looping = '{"entities": [{"name": "Contoso", "type": "ORG"}, {"name": "Fabrikam", "type": "ORG"}, ' + (
        '{"name": "2019", "type": "DATE"}, ' * 40
    )
    chat = ScriptedChat([looping], honour_limits=True)
    extractor = LlmExtractor(chat, max_tokens=len(looping.split()) - 3)  # cut inside the last item
    (x,) = extractor.extract([ChunkText("c", text)])
    assert extractor.fallbacks == 0  # the reply was used, not replaced by the rules
    assert {m.key for m in x.mentions} == {"contoso", "fabrikam", "2019"}  # each name once
    assert "berlin" not in {m.key for m in x.mentions}  # the rules (which find Berlin) did not run


def test_llm_extractor_falls_back_when_a_cut_off_reply_completed_no_item() -> None:
    extractor = LlmExtractor(
        ScriptedChat(['{"entities": [{"name": "Contoso", "type": "ORG"}]}'], honour_limits=True), max_tokens=2
    )
    (x,) = extractor.extract([ChunkText("c", "Last year Contoso acquired Fabrikam Corp in Berlin.")])
    assert extractor.fallbacks == 1 and {m.key for m in x.mentions} >= {"contoso", "fabrikam"}


def test_complete_items_closes_a_prefix_after_its_last_complete_item() -> None:
    cut = '{"entities":[{"name":"A \\"x\\" ]}","type":"ORG"}],"relations":[{"source":"A"},{"sou'
    assert json.loads(complete_items(cut) or "") == {
        "entities": [{"name": 'A "x" ]}', "type": "ORG"}],
        "relations": [{"source": "A"}],
    }
    assert complete_items('{"entities":[{"na') is None
    assert complete_items("not json") is None


def test_llm_schema_caps_the_reply() -> None:
    chat = ScriptedChat(['{"entities":[],"relations":[]}'])
    LlmExtractor(chat).extract([ChunkText("c", "Contoso.")])
    schema = chat.calls[0].kwargs["json_schema"]
    assert schema["properties"]["entities"]["maxItems"] == MAX_ENTITIES
    assert schema["properties"]["relations"]["maxItems"] == MAX_RELATIONS
    assert schema["properties"]["relations"]["items"]["properties"]["evidence"]["maxLength"] > 0
