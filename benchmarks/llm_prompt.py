"""System-prompt variants for the LLM answer, paired on the same answerable questions (issue 20 item 3).

    python benchmarks/llm_prompt.py --squad PATH/dev-v2.0.json --llm local:1.5b --split train --n 30 \
        [--variant current --variant quote] [--compress N] [--hint] [--threads 2] [--work DIR]

Every answerable question of a seeded sample is asked once per variant with the gate off (the gates
decide *whether* to answer; this measures *what* the model says when it does), over a store of the
split's SQuAD articles (``--split train``: the nine training articles, for choosing; ``--split heldout``:
the five held-out articles, for the report; the reserved articles never). Retrieval is the same for
every variant, so the sources are the same and only the system prompt differs. ``--compress N``: the
model reads each source compressed to its N sentences closest to the question (``use_compression``,
``compression_max_sentences=N``), a shorter prompt. ``--hint``: the question is followed by the sentence
the extractive answer quotes (the sentence model's pick) with its source label, as the likeliest answer line.

Per variant (and with ``--compress``/``--hint``, per variant with and without that setting):
``answer_accuracy`` (answered questions holding a gold answer), ``answered_correct``
(the model's own declines count as misses), citation correctness, the model's own declines, words per
answer; then each row against the first, paired per question (bootstrap interval of the difference
in ``answered_correct``). Answers are cached in ``WORK/prompt-<model>-<split>.pkl`` keyed by the prompt
text, so a rerun resumes and a changed prompt is asked anew.
"""

from __future__ import annotations

import argparse
import hashlib
import pickle
import random
import sys
import time
from pathlib import Path
from typing import Any, Final

sys.path.insert(0, str(Path(__file__).parents[1] / "tools"))
import squad_data

from ragwright.eval.qa import QaItem, score_qa
from ragwright.eval.stats import bootstrap_ci, paired_bootstrap
from ragwright.generate.citations import without_citations
from ragwright.generate.prompt import DEFAULT_SYSTEM_PROMPT

#: The line of the default prompt the variants change.
ANSWER_LINE: Final = (
    "- Answer in a full sentence and end each statement with the label of its source, like this: "
    "<the fact, in your words> [Source N].\n"
)
VARIANTS: Final = {
    "current": DEFAULT_SYSTEM_PROMPT,
    # The fact in the source's own words: a paraphrase ("ten" for "10", "the king" for "Rollo") loses it.
    "quote": DEFAULT_SYSTEM_PROMPT.replace(
        ANSWER_LINE,
        "- Answer in one sentence that states the fact with the source's own words (names, numbers and "
        "dates exactly as the source writes them) and ends with the label of its source, like this: "
        "<the fact, in the source's words> [Source N].\n",
    ),
}


def sample(arts: list[squad_data.Article], n: int, seed: int) -> list[QaItem]:
    """A seeded sample of *n* answerable questions of *arts* (the unanswerable ones are the gates' matter)."""
    pos = [q for a in arts for q in a.questions if not q.unanswerable]
    chosen = random.Random(seed).sample(pos, min(n, len(pos)))
    return [QaItem(q.id, q.question, q.answers, q.unanswerable) for q in chosen]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--squad", type=Path, required=True)
    ap.add_argument("--llm", default="local:1.5b")
    ap.add_argument("--split", choices=("train", "heldout"), default="train")
    ap.add_argument("--n", type=int, default=30, help="answerable questions (seeded sample)")
    ap.add_argument("--seed", type=int, default=41)
    ap.add_argument("--variant", action="append", choices=sorted(VARIANTS), help="repeatable; the first is the peer")
    ap.add_argument("--compress", type=int, default=0, help="each source cut to its N best sentences (0: off)")
    ap.add_argument("--hint", action="store_true", help="the extractive answer's sentence follows the question")
    ap.add_argument("--threads", type=int, default=1, help="llama.cpp threads (quality does not depend on it)")
    ap.add_argument("--work", type=Path, default=Path(__file__).parent / ".cache" / "qa_squad")
    args = ap.parse_args()
    variants = args.variant or ["current", "quote"]

    from ragwright.generate.options import RagOptions
    from ragwright.models.embedders import default_embedder
    from ragwright.models.llms import load_chat
    from ragwright.options import RetrievalOptions
    from ragwright.rag import Rag
    from ragwright.stores.sqlite import SqliteStore

    train, held = squad_data.split(squad_data.load_squad(args.squad))
    arts = train if args.split == "train" else held
    items = sample(arts, args.n, args.seed)
    args.work.mkdir(parents=True, exist_ok=True)
    squad_data.open_store(arts, args.work, args.split).close()  # ingested once, reused after
    llm = load_chat(args.llm, n_threads=args.threads)
    assert llm is not None
    path = args.work / f"prompt-{llm.name.replace(':', '_').replace('/', '_')}-{args.split}.pkl"
    cache: dict[tuple[str, str], Any] = pickle.loads(path.read_bytes()) if path.exists() else {}
    embedder = default_embedder()
    rags: dict[int, Any] = {}

    def rag_for(compress: int) -> Any:
        """The Rag with the defaults, or the same plus compression to *compress* sentences a source."""
        if compress not in rags:
            retrieval = RetrievalOptions(use_compression=True, compression_max_sentences=compress) if compress else None
            store = SqliteStore(args.work / f"{args.split}.db")
            rags[compress] = Rag(store, embedder, llm=llm, retrieval_options=retrieval)
        return rags[compress]

    def ask(question: str, prompt: str, compress: int, hint: bool) -> Any:
        rag = rag_for(compress)
        if not hint:
            return rag.ask(question, answerability="off", system_prompt=prompt)
        quoted = rag.ask(question, answer_mode="extractive", answerability="off")
        if not quoted.citations:
            return rag.ask(question, answerability="off", system_prompt=prompt)
        label = quoted.citations[0].source
        line = without_citations(quoted.answer).strip()
        hinted = f'{question}\n\nThe line of the sources most likely to answer it ([Source {label}]): "{line}"'
        options = RagOptions(answerability="off", system_prompt=prompt)
        return rag.llm_answerer.answer(hinted, quoted.sources, options)

    # each variant as the default Rag asks it; with --compress / --hint, also with that setting
    runs = [(v, v, 0, False) for v in variants]
    if args.compress or args.hint:
        suffix = f"+compress{args.compress}" * bool(args.compress) + "+hint" * args.hint
        runs += [(v + suffix, v, args.compress, args.hint) for v in variants]
    print(f"{len(items)} answerable questions of the {args.split} articles; model {llm.name}", flush=True)
    scores: dict[str, dict[str, dict[str, float]]] = {}
    answers: dict[str, dict[str, str]] = {}
    for name, variant, compress, hint in runs:
        prompt = VARIANTS[variant]
        setting = prompt + (f"|compress={compress}" if compress else "") + ("|hint" if hint else "")
        key = hashlib.sha256(setting.encode()).hexdigest()[:12]
        start, asked = time.perf_counter(), 0
        for item in items:
            if (key, item.question) not in cache:
                cache[(key, item.question)] = ask(item.question, prompt, compress, hint)
                path.write_bytes(pickle.dumps(cache))
                asked += 1
        if asked:
            print(f"  {name}: {asked} answers in {time.perf_counter() - start:.0f} s", flush=True)
        responses = {item.id: cache[(key, item.question)] for item in items}
        scores[name] = {item.id: score_qa(item, responses[item.id]) for item in items}
        answers[name] = {i: without_citations(r.answer) for i, r in responses.items() if not r.declined}
    for rag in rags.values():
        rag.close()

    names = [run[0] for run in runs]
    width = max(len(n) for n in names) + 1
    header = ("answer_accuracy", "answered_correct", "citation_correct")
    print(f"\n{'variant':<{width}} " + " ".join(f"{h:<22}" for h in header) + " declined  words")
    for name in names:
        rows = scores[name].values()
        cells = []
        for metric in header:
            values = [s[metric] for s in rows if metric in s]
            iv = bootstrap_ci(values)
            cells.append(f"{iv.mean:.3f} [{iv.low:.2f}, {iv.high:.2f}] n={len(values)}")
        declined = sum(1 for s in rows if "answer_accuracy" not in s)
        words = [len(a.split()) for a in answers[name].values()]
        mean_words = sum(words) / len(words) if words else 0.0
        print(f"{name:<{width}} " + " ".join(f"{c:<22}" for c in cells) + f" {declined:<9} {mean_words:.1f}")
    peer = names[0]
    for name in names[1:]:
        a = {q: s["answered_correct"] for q, s in scores[peer].items()}
        b = {q: s["answered_correct"] for q, s in scores[name].items()}
        cmp = paired_bootstrap(a, b)
        print(
            f"{name} - {peer}, answered_correct (paired): {cmp.difference.mean:+.3f} "
            f"[{cmp.difference.low:+.3f}, {cmp.difference.high:+.3f}], {cmp.wins} better, {cmp.losses} worse"
        )
    by_id = {i.id: i for i in items}
    for name in names[1:]:
        for q, s in scores[name].items():
            if s["answered_correct"] != scores[peer][q]["answered_correct"]:
                item = by_id[q]
                print(f"\n  {item.question}  gold: {item.answers[0]!r}")
                for n in (peer, name):
                    print(f"    {n}: {answers[n].get(q, '(declined)')[:200]}")


if __name__ == "__main__":
    main()
