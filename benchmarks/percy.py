"""Benchmark of the PERCY token explainers and of PERCY end to end, in one run.

Measures, on the paper's 1D-CNN backbone (token ids + TextVectorization tokenizer):

1. the LIME adapter on 100 sentences x 1,000 samples against the *floor*: the same
   number of batched forward passes of the model (same compiled function, same batch
   size, inputs prepared in advance). Target ratio <= 1.5. Stock LIME
   (``LimeTextExplainer.explain_instance`` per sentence, one model call per sentence) is
   measured on the same sentences for reference;
2. the same figures for SHAP (10 permutations per sentence; reference: shap's
   ``PermutationExplainer`` called per sentence, unpooled) and Integrated Gradients (64
   steps; its floor is given both as forward passes and as batched gradient passes);
3. L-, S- and I-PERCY end to end on 1,000 generated sentences of at most 24 tokens
   (PERCY construction, explanations and scoring). Target: under 5 minutes in total.

Usage::

    python benchmarks/percy.py            # full run
    python benchmarks/percy.py --quick    # smaller sizes, to check it works
"""

from __future__ import annotations

import argparse
import os
import sys
import time
import warnings

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

import numpy as np  # noqa: E402


def timed(fn, *args, **kwargs):
    start = time.perf_counter()
    out = fn(*args, **kwargs)
    return out, time.perf_counter() - start


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small sizes")
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)

    import shap
    import tensorflow as tf
    from lime.lime_text import LimeTextExplainer

    from xplique_ext.metrics import PERCY, NoRuleKeywordWarning
    from xplique_ext.text import (
        IntegratedGradientsTokenExplainer,
        LimeTokenExplainer,
        ShapTokenExplainer,
        build_cnn_classifier,
        generate_sentences,
        make_vectorizer,
        train_classifier,
        whitespace_tokens,
    )
    from xplique_ext.text.explainers import _TokenMasker

    n_expl = 20 if args.quick else 100
    n_e2e = 100 if args.quick else 1000
    lime_samples, shap_perms, ig_steps = 1000, 10, 64
    bs = args.batch_size

    t_all = time.perf_counter()
    train = generate_sentences(2000, seed=args.seed, structured=0.7, contrastive=0.7)
    tv = make_vectorizer(train.sentence, sequence_length=24)
    cnn = build_cnn_classifier(tv, seed=args.seed)
    _, t_train = timed(
        train_classifier,
        cnn,
        tv(list(train.sentence)).numpy(),
        train.label,
        epochs=3,
        seed=args.seed,
    )
    test = generate_sentences(n_e2e, seed=args.seed + 1, structured=1.0, contrastive=0.7)
    sentences = list(test.sentence[:n_expl])
    ids = tv(sentences).numpy().astype("int32")
    print(f"# PERCY benchmark ({'quick' if args.quick else 'full'} run)")
    print(
        f"CNN backbone: {cnn.count_params():,} parameters, sequence length 24, "
        f"trained in {t_train:.1f} s; batch_size={bs}; CPU threads: "
        f"{tf.config.threading.get_intra_op_parallelism_threads() or os.cpu_count()}"
    )

    @tf.function(reduce_retracing=True)
    def forward(x):
        return cnn(x, training=False)

    def floor(rows_per_sentence):
        """Time of the same number of batched forward passes, inputs ready."""
        x = np.concatenate(
            [np.repeat(ids[i : i + 1], r, axis=0) for i, r in enumerate(rows_per_sentence)]
        )
        forward(x[:bs]), forward(x[:1])  # trace full and partial batches first
        start = time.perf_counter()
        for s in range(0, len(x), bs):
            forward(x[s : s + bs]).numpy()
        return time.perf_counter() - start, len(x)

    @tf.function(reduce_retracing=True)
    def grad_pass(x):
        emb = cnn.get_layer("embedding")
        with tf.GradientTape() as tape:
            e = emb(x)
            tape.watch(e)
            h = e
            outs = []
            for k in (3, 4, 5):
                outs.append(cnn.get_layer(f"pool{k}")(cnn.get_layer(f"conv{k}")(h)))
            p = cnn.get_layer("sigmoid")(cnn.get_layer("concat")(outs))
        return tape.gradient(p, e)

    def grad_floor(rows):
        x = np.repeat(ids, rows, axis=0)
        grad_pass(x[:bs]), grad_pass(x[:1])
        start = time.perf_counter()
        for s in range(0, len(x), bs):
            grad_pass(x[s : s + bs]).numpy()
        return time.perf_counter() - start

    def predict_strings(texts):
        x = tv(list(texts)).numpy().astype("int32")
        out = np.concatenate([forward(x[s : s + bs]).numpy() for s in range(0, len(x), bs)])
        return np.concatenate([1 - out, out], axis=1)

    rows = []

    # ------------------------------------------------------------------ LIME
    lime = LimeTokenExplainer(cnn, tv, bs, nb_samples=lime_samples, progress=False)
    lime(sentences[:2])  # warm-up (tracing)
    _, t_lime = timed(lime, sentences)
    t_floor, n_rows = floor([lime_samples] * len(sentences))

    def stock_lime():
        explainer = LimeTextExplainer(
            bow=False, split_expression=whitespace_tokens, random_state=args.seed
        )
        for s in sentences:
            explainer.explain_instance(
                s,
                predict_strings,
                labels=(1,),
                num_features=len(s.split()),
                num_samples=lime_samples,
            )

    _, t_stock = timed(stock_lime)
    rows.append(("LIME", n_rows, t_lime, t_floor, t_stock, "stock LimeTextExplainer"))

    # ------------------------------------------------------------------ SHAP
    shp = ShapTokenExplainer(cnn, tv, bs, n_permutations=shap_perms, progress=False)
    shp(sentences[:2])
    _, t_shap = timed(shp, sentences)
    per = [shap_perms * (2 * len(s.split()) + 1) for s in sentences]
    t_floor, n_rows = floor(per)

    def stock_shap():
        state = np.random.get_state()
        try:
            for s in sentences:
                words = np.array(whitespace_tokens(s), dtype=object)

                def model(masks, words=words):
                    texts = [" ".join(np.where(m, words, "UNKWORDZ")) for m in masks]
                    return predict_strings(texts)[:, 1]

                explainer = shap.PermutationExplainer(model, _TokenMasker(len(words)), seed=0)
                explainer(
                    np.zeros((1, len(words))),
                    max_evals=shap_perms * (2 * len(words) + 1),
                    silent=True,
                )
        finally:
            np.random.set_state(state)

    _, t_stock = timed(stock_shap)
    rows.append(("SHAP", n_rows, t_shap, t_floor, t_stock, "shap per sentence, unpooled"))

    # ------------------------------------------------------------------ IG
    ig = IntegratedGradientsTokenExplainer(cnn, tv, bs, steps=ig_steps, progress=False)
    ig(sentences[:2])
    _, t_ig = timed(ig, sentences)
    t_floor, n_rows = floor([ig_steps + 1] * len(sentences))
    t_grad = grad_floor(ig_steps + 1)
    extra = int(ig.steps_used_.sum() - ig_steps * len(sentences))
    rows.append(("IG", n_rows, t_ig, t_floor, t_grad, "batched gradient passes (floor)"))

    print(f"\n## Token explainers on {len(sentences)} sentences (times in s)")
    print(
        f"{'explainer':<10}{'inputs':>9}{'adapter':>9}{'floor':>8}{'ratio':>7}"
        f"{'reference':>11}{'ref/floor':>11}  reference is"
    )
    for name, n, t, f, ref, what in rows:
        print(
            f"{name:<10}{n:>9,}{t:>9.2f}{f:>8.2f}{t / f:>7.2f}{ref:>11.2f}{ref / f:>11.2f}  {what}"
        )
    print(
        f"IG completeness: max |sum(attributions) - (p(s) - p(baseline))| = "
        f"{np.max(np.abs(ig.convergence_delta_)):.2e} with {ig_steps} trapezoid steps, "
        f"refined to {ig.steps_used_.max()} for {int(np.sum(ig.steps_used_ > ig_steps))} "
        f"sentence(s) ({extra} extra gradient inputs, included in the adapter's time; the "
        "floors count the first pass only)"
    )
    print(f"IG adapter / batched gradient passes of the same inputs: {rows[2][2] / rows[2][4]:.2f}")
    lime_ratio = rows[0][2] / rows[0][3]
    print(
        f"LIME target ratio <= 1.5: {'met' if lime_ratio <= 1.5 else 'NOT met'} ({lime_ratio:.2f})"
    )

    # ------------------------------------------------------------------ end to end
    print(f"\n## L-, S- and I-PERCY end to end on {n_e2e} sentences (<= 24 tokens)")
    all_sentences = list(test.sentence)
    e2e = {}
    start = time.perf_counter()
    percy, t_percy = timed(PERCY, cnn, all_sentences, test.label.to_numpy(), bs, tokenizer=tv)
    for name, explainer in (("L-PERCY", lime), ("S-PERCY", shp), ("I-PERCY", ig)):
        t0 = time.perf_counter()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", NoRuleKeywordWarning)
            score = percy.evaluate(percy.explain(explainer))
        e2e[name] = (score, time.perf_counter() - t0)
    total = time.perf_counter() - start
    print(f"accuracy {percy.accuracy:.3f} (PERCY construction {t_percy:.1f} s)")
    for name, (score, t) in e2e.items():
        print(f"{name}: {score:.3f} in {t:.1f} s")
    print(
        f"total {total:.1f} s ({total / 60:.2f} min); target < 5 min: "
        f"{'met' if total < 300 else 'NOT met'}"
    )
    print(f"\nwhole benchmark: {time.perf_counter() - t_all:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
