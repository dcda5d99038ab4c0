"""PERCY's experiment end to end (sections 4-6, Tables 3-5 and Figure 4 of the paper).

Trains the grid of sentiment classifiers

    {CNN, LSTM} x {Iterative Knowledge Distillation, none} x {fine-tuned, frozen}
    x {embeddings}

scores each one with accuracy, weighted precision / recall / F1 (scikit-learn) and L-,
S- and I-PERCY on the test sentences that hold a rule keyword (the paper reports "only
on test examples that contain a syntactic structure"), prints the table in the layout of
Tables 4-5, the Kendall tau between the accuracy ranking and each PERCY ranking (as
Figure 4), and saves Figure 4's rank scatter plots.

Classifier names follow Table 3: C / L (CNN / LSTM), D (distilled), F (fine-tuned
embeddings), then the embedding: R (random, trained from scratch), W (word2vec file), G
(GloVe file), B (keras-hub backbone). Distilled classifiers are the logic-rule
dissemination (LRD) ones (green in Figure 4).

Data: generated contrastive sentences by default (``xplique_ext.text.generate_sentences``,
labels following the rule), ``--dataset sst2`` / ``--dataset sentiment140`` (the paper's
datasets through ``load_sentiment_dataset``: ``--data`` names the published file or folder,
else they are downloaded), or ``--data FILE``: a two-column sentence / label file (CSV or
TSV, header optional). Everything is seeded: two runs with the same arguments print
the same table.

Embeddings (``--embeddings``, several allowed):

* ``random``: an embedding trained from scratch (fine-tuned) or left at its random
  initialisation (frozen);
* ``word2vec:PATH`` / ``glove:PATH``: vectors from a word2vec / GloVe text file;
* ``hub:PRESET``: contextual embeddings from a keras-hub backbone (the ``text`` extra):
  the CNN / LSTM heads read the backbone's sequence output (one vector per word piece,
  ``xplique_ext.text.build_hub_classifier``), the backbone frozen or fine-tuned (F), its
  preprocessor packing the sentences. ``PRESET`` is a keras-hub preset
  (``hub:bert_tiny_en_uncased``, downloaded once by keras-hub;
  ``--hub-sequence-length`` word pieces) or, from Python, a name given to ``main``'s
  ``backbones`` (``{name: (backbone, preprocessor)}``, in memory: what the tests do). PERCY
  and the explainers give one attribution per word (word pieces summed,
  ``xplique_ext.text.adapt_text_model``).

ELMo and SentiBERT weights cannot be downloaded here; see the README ("PERCY's
experiment") for how to plug them in.

Usage::

    python benchmarks/percy_experiments.py --n-train 1200 --n-test 120
    python benchmarks/percy_experiments.py --tiny               # a smoke-test size
    python benchmarks/percy_experiments.py --data sst2.tsv --embeddings glove:glove.6B.100d.txt
    python benchmarks/percy_experiments.py --embeddings random hub:bert_tiny_en_uncased
"""

from __future__ import annotations

import argparse
import os
import sys
import time
import warnings
from pathlib import Path

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

import numpy as np  # noqa: E402

FRAMEWORKS = ("L", "S", "I")
EMBEDDING_LETTERS = {"random": "R", "word2vec": "W", "glove": "G", "hub": "B"}


def parse_embedding(spec: str):
    kind, _, arg = spec.partition(":")
    if kind not in EMBEDDING_LETTERS:
        raise SystemExit(
            f"--embeddings: expected random, word2vec:PATH, glove:PATH or hub:PRESET, got {spec!r}"
        )
    if kind in ("word2vec", "glove") and not arg:
        raise SystemExit(f"--embeddings {kind} needs a file: {kind}:PATH")
    if kind == "hub":
        if not arg:
            raise SystemExit("--embeddings hub needs a keras-hub preset: hub:PRESET")
        try:
            import keras_hub  # noqa: F401
        except ImportError:
            raise ImportError(
                "--embeddings hub:PRESET (contextual embeddings from a keras-hub backbone) "
                "needs keras-hub: pip install 'xplique_ext[text]'"
            ) from None
    return kind, arg


def load_data(args):
    """Train sentences/labels and test sentences/labels (test: rule sentences only)."""
    import pandas as pd
    from sklearn.model_selection import train_test_split

    from xplique_ext.text import generate_sentences, rule_conjuncts

    if args.data is None and args.dataset is None:
        train = generate_sentences(
            args.n_train, seed=args.seed, structured=0.75, contrastive=0.75, max_tokens=24
        )
        test = generate_sentences(
            args.n_test,
            seed=args.seed + 1,
            structured=1.0,
            contrastive=0.75,
            max_tokens=24,
            a_style=args.test_style,
            b_style=args.test_style,
        )
        source = (
            f"generated sentences (seed {args.seed}): {len(train)} train (75% A-keyword-B, "
            f"75% of those contrastive), {len(test)} test, all A-keyword-B, "
            f"{args.test_style!r} clauses"
        )
        return (
            list(train.sentence),
            train.label.to_numpy(),
            list(test.sentence),
            test.label.to_numpy(),
            source,
        )
    if args.dataset is not None:
        from xplique_ext.text import load_sentiment_dataset

        # the train split (SST-2's test labels are hidden), split 80/20 below
        sentences, labels = load_sentiment_dataset(args.dataset, "train", path=args.data)
        name = f"{args.dataset} ({args.data or 'downloaded'})"
    else:
        df = pd.read_csv(args.data, sep=None, engine="python")
        if {"sentence", "label"} <= set(df.columns):
            df = df[["sentence", "label"]]
        else:
            df = pd.read_csv(args.data, sep=None, engine="python", header=None).iloc[:, :2]
            df.columns = ["sentence", "label"]
            if not str(df.label.iloc[0]).strip().lstrip("-").isdigit():
                df = df.iloc[1:]
        df = df.dropna()
        sentences = df.sentence.astype(str).tolist()
        labels = df.label.astype(int).to_numpy()
        name = str(args.data)
    if not np.isin(labels, (0, 1)).all():
        raise SystemExit("--data: labels must be 0/1")
    tr_s, te_s, tr_y, te_y = train_test_split(
        sentences, labels, test_size=0.2, random_state=args.seed, stratify=labels
    )
    _, has = rule_conjuncts(te_s)
    te_s = [s for s, h in zip(te_s, has) if h]
    te_y = te_y[has]
    if args.n_train:
        tr_s, tr_y = tr_s[: args.n_train], tr_y[: args.n_train]
    if args.n_test:
        te_s, te_y = te_s[: args.n_test], te_y[: args.n_test]
    source = f"{name}: {len(tr_s)} train, {len(te_s)} test sentences with a rule keyword"
    return tr_s, tr_y, te_s, te_y, source


def build_model(base, tv, matrix, fine_tune, args, seed):
    from xplique_ext.text import (
        build_cnn_classifier,
        build_hub_classifier,
        build_lstm_classifier,
        set_embedding,
    )

    if isinstance(matrix, tuple):  # (keras-hub backbone, preprocessor)
        return build_hub_classifier(
            matrix[0],
            "cnn" if base == "C" else "lstm",
            trainable=fine_tune,
            filters=args.filters,
            units=args.units,
            dropout=0.5,
            seed=seed,
        )
    dim = args.embedding_dim if matrix is None else matrix.shape[1]
    if base == "C":
        model = build_cnn_classifier(
            tv, embedding_dim=dim, filters=args.filters, dropout=0.5, seed=seed
        )
    else:
        model = build_lstm_classifier(
            tv, embedding_dim=dim, units=args.units, dropout=0.5, seed=seed
        )
    return set_embedding(model, matrix, trainable=fine_tune)


def score(model, tv, test_s, test_y, args, seed):
    from sklearn.metrics import accuracy_score, precision_recall_fscore_support

    from xplique_ext.metrics import PERCY, NoRuleKeywordWarning
    from xplique_ext.text import (
        IntegratedGradientsTokenExplainer,
        LimeTokenExplainer,
        ShapTokenExplainer,
    )

    bs = args.batch_size
    percy = PERCY(
        model,
        test_s,
        test_y,
        bs,
        tokenizer=tv,
        preset=None if args.preset == "paper" else "authors",
    )
    pred = percy.predictions
    prec, rec, f1, _ = precision_recall_fscore_support(
        test_y, pred, average="weighted", zero_division=0
    )
    row = {
        "Accuracy": accuracy_score(test_y, pred),
        "Precision": prec,
        "Recall": rec,
        "F1-score": f1,
    }
    explainers = {
        "L": LimeTokenExplainer(model, tv, bs, nb_samples=args.lime_samples, seed=seed),
        "S": ShapTokenExplainer(model, tv, bs, n_permutations=args.shap_permutations, seed=seed),
        "I": IntegratedGradientsTokenExplainer(model, tv, bs, steps=args.ig_steps, seed=seed),
    }
    for name, explainer in explainers.items():
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", NoRuleKeywordWarning)
            warnings.simplefilter("ignore", UserWarning)
            row[f"{name}-PERCY"] = percy.evaluate(percy.explain(explainer))
    return row


def kendall(rows):
    """Kendall tau between the accuracy ranking and each PERCY ranking."""
    from scipy.stats import kendalltau, rankdata

    acc = np.array([r["Accuracy"] for r in rows])
    out = {}
    for fw in FRAMEWORKS:
        pe = np.array([r[f"{fw}-PERCY"] for r in rows])
        res = kendalltau(rankdata(-acc), rankdata(-pe))
        out[fw] = (float(res.statistic), float(res.pvalue))
    return out


def print_table(rows, taus, file=None):
    file = sys.stdout if file is None else file
    cols = ["Accuracy", "Precision", "Recall", "F1-score", "L-PERCY", "S-PERCY", "I-PERCY"]
    print(
        f"| {'Classifier':<10} | {'Sentiment classification metrics':^47} | {'PERCY scores':^29} |",
        file=file,
    )
    print("| " + " | ".join([f"{'':<10}"] + [f"{c:>9}" for c in cols]) + " |", file=file)
    print("|" + "|".join(["-" * 12] + ["-" * 11] * len(cols)) + "|", file=file)
    for r in rows:
        print(
            "| " + " | ".join([f"{r['name']:<10}"] + [f"{r[c]:>9.4f}" for c in cols]) + " |",
            file=file,
        )
    for fw, (tau, p) in taus.items():
        if np.isnan(tau):
            print(
                f"Kendall tau (accuracy rank vs {fw}-PERCY rank): tau = nan (undefined: "
                "every classifier ties on accuracy or on PERCY)",
                file=file,
            )
            continue
        print(
            f"Kendall tau (accuracy rank vs {fw}-PERCY rank): tau = {tau:+.4f} (p = {p:.3g})",
            file=file,
        )


def plot_figure4(rows, taus, path, title):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from scipy.stats import rankdata

    acc_rank = rankdata(-np.array([r["Accuracy"] for r in rows]))
    lrd = np.array([r["LRD"] for r in rows])
    fig, axes = plt.subplots(1, 3, figsize=(13, 4.2))
    for ax, fw in zip(axes, FRAMEWORKS):
        pr = rankdata(-np.array([r[f"{fw}-PERCY"] for r in rows]))
        ax.scatter(acc_rank[lrd], pr[lrd], c="tab:green", label="LRD (distilled)")
        ax.scatter(acc_rank[~lrd], pr[~lrd], c="tab:red", label="non-LRD")
        for x, y, r in zip(acc_rank, pr, rows):
            ax.annotate(r["name"], (x, y), fontsize=7, xytext=(3, 3), textcoords="offset points")
        if len(rows) > 1 and np.ptp(acc_rank) > 0:
            slope, icpt = np.polyfit(acc_rank, pr, 1)
            xs = np.linspace(acc_rank.min(), acc_rank.max(), 10)
            ax.plot(xs, slope * xs + icpt, color="tab:green", lw=1)
        ax.set_xlabel("accuracy rank (1 = best)")
        ax.set_ylabel(f"{fw}-PERCY rank (1 = best)")
        ax.set_title(f"{fw}-PERCY: Kendall tau = {taus[fw][0]:+.3f}")
        ax.legend(fontsize=7)
    fig.suptitle(title)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def main(argv=None, backbones=None) -> dict:
    """Run the grid; ``backbones`` maps names usable as ``hub:NAME`` to in-memory
    ``(keras-hub backbone, preprocessor)`` pairs (checked before keras-hub presets)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n-train", type=int, default=1200, help="training sentences")
    parser.add_argument("--n-test", type=int, default=120, help="test sentences (rule ones)")
    parser.add_argument(
        "--data",
        default=None,
        help="a two-column sentence/label file; with --dataset, the published file or folder",
    )
    parser.add_argument(
        "--dataset",
        choices=["sst2", "sentiment140"],
        default=None,
        help="the paper's datasets through xplique_ext.text.load_sentiment_dataset (train "
        "split, 80/20 stratified); without --data they are downloaded",
    )
    parser.add_argument(
        "--test-style",
        choices=["mixed", "sentiment"],
        default="mixed",
        help="generated test clauses: sentiment and neutral words (mixed) or 2-3 sentiment "
        "words only (sentiment, where PERCY's t-test has several tokens to compare)",
    )
    parser.add_argument("--embeddings", nargs="+", default=["random"])
    parser.add_argument("--models", nargs="+", default=["cnn", "lstm"], choices=["cnn", "lstm"])
    parser.add_argument("--epochs", type=int, default=4)
    parser.add_argument("--batch-size", type=int, default=50, help="the paper's 50")
    parser.add_argument("--learning-rate", type=float, default=1e-3)
    parser.add_argument("--embedding-dim", type=int, default=32)
    parser.add_argument("--filters", type=int, default=32)
    parser.add_argument("--units", type=int, default=32)
    parser.add_argument("--sequence-length", type=int, default=24)
    parser.add_argument(
        "--hub-sequence-length",
        type=int,
        default=64,
        help="word pieces per sentence ([CLS] and [SEP] included) for hub:PRESET",
    )
    parser.add_argument("--C", type=float, default=6.0, help="Hu et al.'s C")
    parser.add_argument("--lime-samples", type=int, default=300)
    parser.add_argument("--shap-permutations", type=int, default=4)
    parser.add_argument("--ig-steps", type=int, default=32)
    parser.add_argument("--preset", choices=["authors", "paper"], default="authors")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", default="percy_experiments_out", help="folder of the figure")
    parser.add_argument(
        "--tiny", action="store_true", help="smoke-test sizes (for the sizes not given)"
    )
    args = parser.parse_args(argv)
    if args.tiny:  # smoke-test sizes, where the command line gives none
        tiny = dict(
            n_train=120,
            n_test=12,
            epochs=2,
            embedding_dim=8,
            filters=4,
            units=4,
            lime_samples=40,
            shap_permutations=1,
            ig_steps=8,
        )
        for key, value in tiny.items():
            if getattr(args, key) == parser.get_default(key):
                setattr(args, key, value)
    embeddings = [parse_embedding(e) for e in args.embeddings]

    import keras
    import tensorflow as tf

    from xplique_ext.text import RuleDistillation, load_word_vectors, make_vectorizer

    tf.config.experimental.enable_op_determinism()
    t0 = time.perf_counter()
    train_s, train_y, test_s, test_y, source = load_data(args)
    tv = make_vectorizer(train_s, sequence_length=args.sequence_length)
    vocab = tv.get_vocabulary()
    matrices = {}
    for kind, arg in embeddings:
        if kind == "random":
            matrices[(kind, arg)] = None
        elif kind == "hub":
            from xplique_ext.text import load_hub_backbone

            if backbones and arg in backbones:
                pair = tuple(backbones[arg])
            else:
                pair = load_hub_backbone(arg, sequence_length=args.hub_sequence_length)
            matrices[(kind, arg)] = pair
            print(
                f"# keras-hub backbone {arg}: {type(pair[0]).__name__}, "
                f"{pair[0].count_params()} parameters, contextual token embeddings of "
                f"size {pair[0].token_embedding.output_dim}"
            )
        else:
            m, found = load_word_vectors(arg, vocab, seed=args.seed)
            matrices[(kind, arg)] = m
            print(f"# {kind} vectors {arg}: {found} of {len(vocab)} vocabulary words found")

    print(f"# PERCY's experiment: {source}")
    print(
        f"# epochs {args.epochs}, batch {args.batch_size}, Adam lr {args.learning_rate}, "
        f"C {args.C}, pi_t = min(1, 1 - 0.95^t); LIME {args.lime_samples} samples, "
        f"SHAP {args.shap_permutations} permutations, IG {args.ig_steps} steps; "
        f"PERCY preset {args.preset}; seed {args.seed}"
    )
    rows = []
    k = 0
    for base in [{"cnn": "C", "lstm": "L"}[m] for m in args.models]:
        for distill in (False, True):
            for fine_tune in (False, True):
                for kind, arg in embeddings:
                    name = base + ("D" if distill else "") + ("F" if fine_tune else "")
                    name += EMBEDDING_LETTERS[kind]
                    seed = args.seed  # same init and batch order within a D / non-D pair
                    keras.utils.set_random_seed(seed)
                    model = build_model(base, tv, matrices[(kind, arg)], fine_tune, args, seed)
                    # the text side: the vectorizer, or the backbone's preprocessor
                    tok = matrices[(kind, arg)][1] if kind == "hub" else tv
                    # non-distilled models go through the same wrapper with pi = 0, which
                    # is plain cross-entropy training (tested), so that a pair differs by
                    # the distillation term only
                    trainer = RuleDistillation(
                        model, tokenizer=tok, C=args.C, pi=None if distill else 0.0
                    )
                    trainer.compile(optimizer=keras.optimizers.Adam(args.learning_rate))
                    t = time.perf_counter()
                    trainer.fit(
                        train_s, train_y, batch_size=args.batch_size, epochs=args.epochs, verbose=0
                    )
                    t_train = time.perf_counter() - t
                    row = score(model, tok, test_s, test_y, args, seed)
                    row.update(name=name, LRD=distill, seconds=time.perf_counter() - t, model=model)
                    rows.append(row)
                    k += 1
                    print(
                        f"# {name}: trained in {t_train:.1f} s, scored in "
                        f"{row['seconds'] - t_train:.1f} s",
                        flush=True,
                    )
    taus = kendall(rows)
    print()
    print_table(rows, taus)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    fig = out / "figure4_accuracy_vs_percy_ranks.png"
    plot_figure4(rows, taus, fig, f"Accuracy vs PERCY ranks ({len(rows)} classifiers)")
    print(f"Figure 4 saved to {fig}")
    print(f"# total {time.perf_counter() - t0:.0f} s")
    return {"rows": rows, "taus": taus, "figure": fig}


if __name__ == "__main__":
    main()
    sys.exit(0)
