"""Conversation memory: do follow-up questions retrieve the right passage when condensed with the history?

    .venv/bin/python benchmarks/conversation_memory.py [--squad /tmp/squad/dev-v2.0.json] [--articles 12]
        [--per-article 20] [--budget 300] [--llm local:0.5b --llm-sample 60]
        [--split dev|tune]

Data: SQuAD 2.0 dev (``tools/answerability_data.json`` names the file and its sha256; the three reserved
acceptance articles are never used). ``--split tune`` runs on the other official dev articles instead
(the manifest's off-corpus file: questions without answers), where the heuristic's choices and the
``condense`` default were made — not on the articles reported. Every paragraph of the first
``--articles`` articles is a document, ingested with the defaults (default embedder, hybrid search).
A conversation per article: the opener is an answerable question that names the article's subject
("…the immune system…"); each follow-up is another such question with the subject replaced by a
pronoun ("it", "they", "its", "their"), asked after the earlier turns (each answered with its gold
answer). The right passage is the question's paragraph.

Conditions, on the same follow-ups (paired):

* ``original`` — the question as SQuAD wrote it (subject named): the upper bound;
* ``no history`` — the follow-up alone (what a stateless ask does);
* ``prev question`` — the previous user message prepended (a common naive baseline);
* ``condensed`` — ``rag.conversation()``'s condensing without a model (the heuristic), the history kept
  by :class:`~ragwright.memory.ConversationMemory` at the default budget;
* ``condensed@B`` — the same with the history budget cut to ``--budget`` tokens (extractive summary).

Metrics: hit@5 and nDCG@10 of the question's paragraph, with paired bootstrap CIs (10,000 resamples);
and the budget's adherence over every turn (the fitted prompt's cl100k tokens against the budget).
"""

from __future__ import annotations

import argparse
import re
import sys
import time
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "tools"))

import squad_data  # noqa: E402

from ragwright.eval.metrics import hit_rate_at_k, ndcg_at_k  # noqa: E402
from ragwright.eval.stats import bootstrap_ci, paired_bootstrap  # noqa: E402
from ragwright.generate.prompt import DEFAULT_SYSTEM_PROMPT  # noqa: E402
from ragwright.memory import ConversationMemory, MemoryOptions, condense_question  # noqa: E402


@dataclass(frozen=True)
class Turn:
    id: str
    original: str
    followup: str
    answer: str
    paragraph: str  # document id


def subject_pattern(title: str) -> re.Pattern[str]:
    words = title.replace("_", " ")
    return re.compile(r"\b(?:the\s+)?" + re.escape(words) + r"(s)?('s|’s)?(?!\w)", re.IGNORECASE)


def pronoun(match: re.Match[str], after_preposition: bool) -> str:
    plural = match.group(1) is not None
    if match.group(2) is not None:  # possessive
        return "their" if plural else "its"
    if plural:
        return "them" if after_preposition else "they"
    return "it"


#: Words after which a pronoun reads naturally ("… of it", "does it …"); a subject used after any other
#: word ("France's Huguenot population", "most steam engines") is adjectival: that question is skipped.
_PREPOSITIONS = "of in by for to from with on at into within against about between"
_BEFORE_WORDS = (
    f"{_PREPOSITIONS} does did do is was are were has have had can could would will should may might that "
    "which and or when how why what who whom where whose"
)
_BEFORE = frozenset(_BEFORE_WORDS.split())


def pronoun_followup(pattern: re.Pattern[str], question: str) -> str | None:
    """*question* with its first mention of the subject replaced by a pronoun, or ``None`` when that would
    not read as a follow-up (the subject used as an adjective, or named again later)."""
    match = pattern.search(question)
    if match is None:
        return None
    before = question[: match.start()].split()
    last = before[-1].casefold().strip(",;:") if before else ""
    if before and last not in _BEFORE:
        return None
    follow = question[: match.start()] + pronoun(match, last in _PREPOSITIONS.split()) + question[match.end() :]
    if pattern.search(follow):
        return None
    return follow[0].upper() + follow[1:]


def conversations(arts: list[squad_data.Article], per_article: int) -> dict[str, list[Turn]]:
    out: dict[str, list[Turn]] = {}
    for art in arts:
        doc = {p: f"{art.title}-{i:03d}" for i, p in enumerate(art.paragraphs)}
        pattern = subject_pattern(art.title)
        turns = []
        for q in art.questions:
            if q.unanswerable or q.context not in doc or not pattern.search(q.question):
                continue
            follow = pronoun_followup(pattern, q.question)
            if turns and follow is None:
                continue  # the opener may name its subject any way; a follow-up must read as one
            turns.append(Turn(q.id, q.question, follow or q.question, q.answers[0], doc[q.context]))
            if len(turns) > per_article:
                break
        if len(turns) >= 3:
            out[art.title] = turns
    return out


def load_tune(path: Path) -> list[squad_data.Article]:
    """The manifest's off-corpus file (the other official dev articles; sha256 checked). It has no
    answers: every question counts, its paragraph is the right passage, its answer turn is a placeholder."""
    import dataclasses
    import hashlib

    expected = squad_data.manifest()["offcorpus"]["sha256"]
    if hashlib.sha256(path.read_bytes()).hexdigest() != expected:
        raise SystemExit(f"{path}: not the manifest's off-corpus file (sha256 {expected})")
    return [
        dataclasses.replace(
            a,
            questions=tuple(
                dataclasses.replace(q, unanswerable=False, answers=("(answer withheld)",)) for q in a.questions
            ),
        )
        for a in squad_data.load_squad(path, check=False)
    ]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--squad", type=Path, default=Path("/tmp/squad/dev-v2.0.json"))
    ap.add_argument(
        "--split",
        choices=("dev", "tune"),
        default="dev",
        help="dev: the reported articles; tune: the other official dev articles (the manifest's off-corpus "
        "file, --tune-squad), where the heuristic and the condense default were chosen",
    )
    ap.add_argument("--tune-squad", type=Path, default=Path("/tmp/squad/test-v2.0.json"))
    ap.add_argument("--articles", type=int, default=12)
    ap.add_argument("--per-article", type=int, default=20)
    ap.add_argument("--budget", type=int, default=300)
    ap.add_argument("--work", type=Path, default=HERE / ".cache" / "conversation_memory")
    ap.add_argument("--llm", default=None, help="also condense with this chat model (e.g. local:0.5b)")
    ap.add_argument(
        "--llm-sample",
        type=int,
        default=60,
        help="follow-ups condensed by --llm (the first N; its comparisons are paired on them)",
    )
    args = ap.parse_args()

    from ragwright.models.embedders import default_embedder
    from ragwright.rag import Rag
    from ragwright.sources import BytesSource
    from ragwright.stores.sqlite import SqliteStore

    arts = squad_data.articles(
        load_tune(args.tune_squad) if args.split == "tune" else squad_data.load_squad(args.squad)
    )
    convos = conversations(arts, args.per_article)
    chosen = list(convos)[: args.articles]
    arts = [a for a in arts if a.title in chosen]
    corpus = {
        f"{a.title}-{i:03d}.md": f"# {a.title.replace('_', ' ')}\n\n{p}"
        for a in arts
        for i, p in enumerate(a.paragraphs)
    }
    followups = sum(len(convos[t]) - 1 for t in chosen)
    print(f"articles: {', '.join(chosen)}; {len(corpus)} paragraphs; {followups} follow-ups", flush=True)

    args.work.mkdir(parents=True, exist_ok=True)
    # the store is kept in --work: a second run reuses it (unchanged documents are skipped)
    start = time.perf_counter()
    name = "squad" if args.split == "dev" else "tune"
    rag = Rag(SqliteStore(args.work / f"{name}-{len(chosen)}.db"), default_embedder())
    report = rag.ingest(BytesSource({k: v.encode() for k, v in corpus.items()}))
    print(
        f"store ready in {time.perf_counter() - start:.0f}s (default embedder, hybrid; "
        f"{report.added} added now, {report.unchanged} unchanged)",
        flush=True,
    )

    names = ["original", "no history", "prev question", "condensed", f"condensed@{args.budget}"]
    llm = None
    if args.llm:
        from ragwright.models.llms import load_chat

        llm = load_chat(args.llm)
        names.append("condensed (llm)")
    runs: dict[str, dict[str, list[str]]] = {k: {} for k in names}
    llm_methods: list[str] = []
    llm_seconds = 0.0
    qrels: dict[str, dict[str, int]] = {}
    budget_rows: list[tuple[int, int, int]] = []  # (total tokens, budget, turns dropped)
    carried = 0
    start = time.perf_counter()

    def ranked(query: str) -> list[str]:
        return [r.document_id.removesuffix(".md") for r in rag.search(query, top_k=10)]

    for title in chosen:
        turns = convos[title]
        memories = {
            "condensed": ConversationMemory(MemoryOptions()),
            f"condensed@{args.budget}": ConversationMemory(
                MemoryOptions(budget_tokens=args.budget, summary_max_tokens=min(64, args.budget // 4))
            ),
        }
        opener = turns[0]
        for memory in memories.values():
            memory.commit(None, opener.original, opener.answer)
        previous = opener.original
        for turn in turns[1:]:
            qrels[turn.id] = {turn.paragraph: 1}
            runs["original"][turn.id] = ranked(turn.original)
            runs["no history"][turn.id] = ranked(turn.followup)
            runs["prev question"][turn.id] = ranked(f"{previous} {turn.followup}")
            for name, memory in memories.items():
                fitted = memory.fit(turn.followup, DEFAULT_SYSTEM_PROMPT)
                budget_rows.append(
                    (fitted.report.total_tokens, memory.options.budget_tokens, fitted.report.turns_dropped)
                )
                kept = [m for m in fitted.messages if m.role != "system"]
                condensed = condense_question(turn.followup, kept, memory.options)
                carried += condensed.method == "heuristic" and name == "condensed"
                runs[name][turn.id] = ranked(condensed.text)
                if llm is not None and name == "condensed" and len(llm_methods) < args.llm_sample:
                    began = time.perf_counter()
                    by_llm = condense_question(turn.followup, kept, MemoryOptions(condense="llm"), llm)
                    llm_seconds += time.perf_counter() - began
                    llm_methods.append(by_llm.method)
                    runs["condensed (llm)"][turn.id] = ranked(by_llm.text)
                memory.commit(fitted, turn.followup, turn.answer)
            previous = turn.followup
    print(
        f"searched in {time.perf_counter() - start:.0f}s; condensed {carried} of {len(qrels)} follow-ups",
        flush=True,
    )
    rag.close()

    if llm_methods:
        print(
            f"{args.llm} condensed {llm_methods.count('llm')} of {len(llm_methods)} follow-ups "
            f"({len(llm_methods) - llm_methods.count('llm')} fell back to the heuristic), "
            f"{llm_seconds / len(llm_methods):.1f} s each",
            flush=True,
        )
    print(f"\n{'condition':<16} {'hit@5':>22}  {'nDCG@10':>22}  n")
    scores = {}
    for name, run in runs.items():
        judged = {q: qrels[q] for q in run}  # a sampled condition (--llm) is scored on its own sample
        hit = hit_rate_at_k(run, judged, 5)
        ndcg = ndcg_at_k(run, judged, 10)
        scores[name] = (hit, ndcg)
        h, n = bootstrap_ci(list(hit.values())), bootstrap_ci(list(ndcg.values()))
        print(f"{name:<16} {h.mean:.3f} [{h.low:.3f}, {h.high:.3f}]  {n.mean:.3f} [{n.low:.3f}, {n.high:.3f}]  {h.n}")
    print("\npaired (B − A), 95% bootstrap CI           hit@5                      nDCG@10")
    for a, b in (
        ("no history", "condensed"),
        ("prev question", "condensed"),
        ("original", "condensed"),
        ("condensed", f"condensed@{args.budget}"),
        *((("no history", "condensed (llm)"), ("condensed", "condensed (llm)")) if llm_methods else ()),
    ):
        cells = []
        for i in (0, 1):
            c = paired_bootstrap(scores[a][i], scores[b][i])
            d = c.difference
            cells.append(f"{d.mean:+.3f} [{d.low:+.3f}, {d.high:+.3f}]{'*' if c.significant else ' '}")
        print(f"{b:<14} vs {a:<14}  {cells[0]}   {cells[1]}")
    print("(* the interval excludes 0)")

    for budget in sorted({b for _, b, _ in budget_rows}):
        rows = [(t, d) for t, b, d in budget_rows if b == budget]
        over = sum(t > budget for t, _ in rows)
        trimmed = sum(d > 0 for _, d in rows)
        print(
            f"\nbudget {budget} tokens: {len(rows)} turns fitted, max prompt {max(t for t, _ in rows)} tokens "
            f"(system + history + question, cl100k), {over} over budget, {trimmed} turns with earlier turns "
            f"summarised or dropped"
        )


if __name__ == "__main__":
    main()
