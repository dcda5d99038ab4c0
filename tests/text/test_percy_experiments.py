"""benchmarks/percy_experiments.py at a tiny size: the grid of Table 3, the layout of
Tables 4-5, the Kendall tau lines of Figure 4 and its plot; word-vector files."""

import importlib.util
import re
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def experiments():
    spec = importlib.util.spec_from_file_location(
        "percy_experiments", ROOT / "benchmarks" / "percy_experiments.py"
    )
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _glove_file(path, words, dim=8, header=False, seed=0):
    rng = np.random.default_rng(seed)
    lines = [f"{len(words)} {dim}"] if header else []
    for w in words:
        lines.append(w + " " + " ".join(f"{v:.5f}" for v in rng.normal(size=dim)))
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


ROW = re.compile(r"^\| (C|L)D?F?[RWGB] +\|( +[01]\.\d{4} \|){7}$")
TAU = re.compile(
    r"^Kendall tau \(accuracy rank vs ([LSI])-PERCY rank\): tau = [+-]?(\d\.\d{4}|nan)"
)


def _check_layout(printed, names):
    lines = printed.splitlines()
    header = [i for i, line in enumerate(lines) if "Sentiment classification metrics" in line]
    assert len(header) == 1
    cols = lines[header[0] + 1]
    for c in ("Accuracy", "Precision", "Recall", "F1-score", "L-PERCY", "S-PERCY", "I-PERCY"):
        assert c in cols
    rows = [line for line in lines if ROW.match(line)]
    assert [r.split("|")[1].strip() for r in rows] == names
    taus = [TAU.match(line).group(1) for line in lines if TAU.match(line)]
    assert taus == ["L", "S", "I"]


def test_tiny_grid_with_glove_vectors(experiments, tmp_path, capsys):
    from xplique_ext.text import generate_sentences

    words = sorted({w for s in generate_sentences(50, seed=0).sentence for w in s.split()})
    vec = _glove_file(tmp_path / "glove.txt", words[: len(words) // 2])
    out = experiments.main(
        ["--tiny", "--models", "cnn", "--embeddings", f"glove:{vec}", "--out", str(tmp_path)]
    )
    printed = capsys.readouterr().out
    _check_layout(printed, ["CG", "CFG", "CDG", "CDFG"])
    assert "vocabulary words found" in printed
    assert out["figure"].is_file() and out["figure"].stat().st_size > 1000
    rows = out["rows"]
    assert [r["LRD"] for r in rows] == [False, False, True, True]
    for r in rows:
        for key in ("Accuracy", "Precision", "Recall", "F1-score"):
            assert 0 <= r[key] <= 1
    assert set(out["taus"]) == {"L", "S", "I"}
    for tau, _p in out["taus"].values():
        assert -1 <= tau <= 1 or np.isnan(tau)


def test_tiny_grid_on_a_sentence_label_file(experiments, tmp_path, capsys):
    from xplique_ext.text import generate_sentences

    df = generate_sentences(150, seed=4, structured=0.8)
    data = tmp_path / "data.tsv"
    df[["sentence", "label"]].to_csv(data, sep="\t", index=False)
    experiments.main(
        [
            "--tiny",
            "--models",
            "cnn",
            "--data",
            str(data),
            "--out",
            str(tmp_path),
        ]
    )
    printed = capsys.readouterr().out
    _check_layout(printed, ["CR", "CFR", "CDR", "CDFR"])
    assert f"{data}:" in printed


def test_embedding_specs_say_what_is_missing(experiments):
    try:
        import keras_hub  # noqa: F401

        assert experiments.parse_embedding("hub:bert_tiny_en_uncased") == (
            "hub",
            "bert_tiny_en_uncased",
        )
    except ImportError:
        with pytest.raises(ImportError, match=r"xplique_ext\[text\]"):
            experiments.parse_embedding("hub:bert_tiny_en_uncased")
    with pytest.raises(SystemExit, match="preset"):
        experiments.parse_embedding("hub")
    with pytest.raises(SystemExit):
        experiments.parse_embedding("elmo")
    with pytest.raises(SystemExit):
        experiments.parse_embedding("glove")  # no file


def _hub_vocabulary():
    """A WordPiece vocabulary of a few dozen entries: the generator's commonest words."""
    from collections import Counter

    from xplique_ext.text import generate_sentences

    counts = Counter(w for s in generate_sentences(200, seed=0).sentence for w in s.split())
    words = [w for w, _ in counts.most_common(40) if w.isalpha()]
    return ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", *words, "##s", "##ed", "##ing"]


def _run_hub_grid(experiments, tmp_path, capsys, tiny_bert, models):
    """hub:NAME with an in-memory tiny BERT: the classifiers (distilled/plain x
    frozen/fine-tuned) over its contextual token embeddings, trained and scored; the
    frozen ones leave the backbone's weights as they were, the fine-tuned ones move them;
    attributions are one per word."""
    from xplique_ext.text import IntegratedGradientsTokenExplainer, generate_sentences

    _, pre, backbone = tiny_bert(_hub_vocabulary(), sequence_length=28, seed=0)
    before = [w.copy() for w in backbone.get_weights()]
    small = ["--n-train", "40", "--n-test", "6", "--epochs", "1", "--batch-size", "40"]
    small += ["--lime-samples", "20", "--ig-steps", "4", "--filters", "2", "--units", "2"]
    out = experiments.main(
        ["--tiny", *small, "--models", *models, "--embeddings", "hub:tiny", "--out", str(tmp_path)],
        backbones={"tiny": (backbone, pre)},
    )
    printed = capsys.readouterr().out
    names = [
        b + d + f + "B"
        for b in [m[0].upper() for m in models]
        for d in ("", "D")
        for f in ("", "F")
    ]
    _check_layout(printed, names)
    assert "keras-hub backbone tiny: BertBackbone" in printed
    rows = {r["name"]: r for r in out["rows"]}
    for w0, w1 in zip(before, backbone.get_weights()):  # the user's backbone: untouched
        np.testing.assert_array_equal(w0, w1)
    for name, r in rows.items():
        model = r["model"]
        assert model.backbone is not backbone and model.backbone.trainable == ("F" in name)
        moved = max(
            float(np.abs(w0 - w1).max()) for w0, w1 in zip(before, model.backbone.get_weights())
        )
        if "F" in name:
            assert moved > 0, name
        else:
            assert moved == 0, name
        for key in ("Accuracy", "Precision", "Recall", "F1-score"):
            assert 0 <= r[key] <= 1
    test_s = generate_sentences(3, seed=7, structured=1.0).sentence.tolist()
    ig = IntegratedGradientsTokenExplainer(rows[names[-1]]["model"], pre, steps=8)
    assert [a.shape for a in ig(test_s)] == [(len(s.split()),) for s in test_s]


def test_tiny_grid_on_a_keras_hub_backbone(experiments, tmp_path, capsys, tiny_bert):
    """The CNN's four cells (plain/distilled x frozen/fine-tuned) on a tiny BERT."""
    _run_hub_grid(experiments, tmp_path, capsys, tiny_bert, ["cnn"])


@pytest.mark.slow
def test_full_grid_on_a_keras_hub_backbone(experiments, tmp_path, capsys, tiny_bert):
    """All eight cells, CNN and LSTM (about 2 minutes on 2 shared cores)."""
    _run_hub_grid(experiments, tmp_path, capsys, tiny_bert, ["cnn", "lstm"])


@pytest.mark.parametrize("head", ["cnn", "lstm"])
def test_hub_heads_ignore_padding_and_validate(head, tiny_bert):
    """The heads read the real word pieces only: more padding gives the same
    probabilities (the LSTM's mask, the CNN's zeroed padding); bad arguments are named."""
    keras_hub = pytest.importorskip("keras_hub")
    from xplique_ext.text import build_hub_classifier

    tokenizer, pre, backbone = tiny_bert(_hub_vocabulary(), sequence_length=40, seed=1)
    model = build_hub_classifier(backbone, head, filters=3, units=3, seed=0)
    kernel, bias = model.get_layer("sigmoid").get_weights()
    # a larger kernel, no bias: the probabilities differ between sentences
    model.get_layer("sigmoid").set_weights([kernel * 5, bias * 0])
    s = ["the film was good but the plot was dull", "a dull plot", "good"]
    short = keras_hub.models.BertTextClassifierPreprocessor(tokenizer, sequence_length=16)
    p_long = model(pre(s), training=False).numpy()
    np.testing.assert_allclose(model(short(s), training=False).numpy(), p_long, atol=1e-5)
    assert np.ptp(p_long) > 1e-3, p_long
    assert model.backbone is not backbone and not model.backbone.trainable
    with pytest.raises(TypeError, match="backbone"):
        build_hub_classifier(object(), head)
    with pytest.raises(ValueError, match="head"):
        build_hub_classifier(backbone, "gru")
    with pytest.raises(ValueError, match="dropout"):
        build_hub_classifier(backbone, head, dropout=1.0)


def _args(experiments, argv):
    import argparse

    ns = argparse.Namespace(
        data=None, dataset=None, n_train=0, n_test=0, seed=0, test_style="mixed"
    )
    for k, v in argv.items():
        setattr(ns, k, v)
    return ns


def test_load_data_sst2_file_and_two_column_file(experiments, tmp_path):
    """--dataset sst2 reads GLUE's train.tsv through load_sentiment_dataset; the test
    split keeps the rule sentences only; a two-column file without header works too."""
    from xplique_ext.text import generate_sentences, rule_conjuncts

    df = generate_sentences(200, seed=1, structured=0.6)
    (tmp_path / "train.tsv").write_text(
        "sentence\tlabel\n" + "".join(f"{s}\t{y}\n" for s, y in zip(df.sentence, df.label))
    )
    tr_s, tr_y, te_s, te_y, source = experiments.load_data(
        _args(experiments, {"dataset": "sst2", "data": str(tmp_path)})
    )
    assert source.startswith("sst2")
    assert len(tr_s) == 160 and len(tr_y) == 160
    assert rule_conjuncts(te_s)[1].all() and len(te_s) == len(te_y) > 0
    plain = tmp_path / "plain.tsv"  # no header
    plain.write_text("".join(f"{s}\t{y}\n" for s, y in zip(df.sentence, df.label)))
    tr2, y2, te2, _, _ = experiments.load_data(_args(experiments, {"data": str(plain)}))
    assert sorted(tr2 + te2) != [] and len(tr2) == 160 and set(y2) <= {0, 1}
    assert te2 == te_s  # same seed, same stratified split, same sentences


@pytest.mark.slow
def test_same_seed_same_table(experiments, tmp_path, capsys):
    args = ["--tiny", "--out", str(tmp_path)]
    experiments.main(args)
    first = [line for line in capsys.readouterr().out.splitlines() if line.startswith("|")]
    experiments.main(args)
    second = [line for line in capsys.readouterr().out.splitlines() if line.startswith("|")]
    assert first == second and len(first) == 3 + 8


# --------------------------------------------------------------------------- vectors
def test_load_word_vectors_formats(tmp_path):
    from xplique_ext.text import load_word_vectors

    vocab = ["", "[UNK]", "good", "bad", "film"]
    for header in (False, True):
        f = _glove_file(tmp_path / f"v{header}.txt", ["good", "bad", "other"], dim=3, header=header)
        m, found = load_word_vectors(f, vocab, seed=1)
        assert m.shape == (5, 3) and m.dtype == np.float32 and found == 2
        np.testing.assert_array_equal(m[0], 0)
        good = np.array(f.read_text().splitlines()[int(header)].split()[1:], dtype=np.float32)
        np.testing.assert_array_equal(m[2], good)
        assert np.abs(m[4]).max() <= 0.25  # unknown word: uniform in [-0.25, 0.25]
        m2, _ = load_word_vectors(f, vocab, seed=1)
        np.testing.assert_array_equal(m, m2)


def test_load_word_vectors_hostile(tmp_path):
    from xplique_ext.text import load_word_vectors

    with pytest.raises(FileNotFoundError, match="path"):
        load_word_vectors(tmp_path / "none.txt", ["a"])
    bad = tmp_path / "bad.txt"
    bad.write_text("good 1 2 3\nbad 1 2\n")
    with pytest.raises(ValueError, match="line 2"):
        load_word_vectors(bad, ["good", "bad"])
    bad.write_text("good 1 x 3\n")
    with pytest.raises(ValueError, match="non-number"):
        load_word_vectors(bad, ["good"])
    bad.write_text("good 1 nan 3\n")
    with pytest.raises(ValueError, match="NaN"):
        load_word_vectors(bad, ["good"])
    bad.write_text("")
    with pytest.raises(ValueError, match="no vector"):
        load_word_vectors(bad, ["good"])
    with pytest.raises(ValueError, match="vocabulary"):
        load_word_vectors(bad, [])


def test_load_word_vectors_warns_when_no_word_is_found(tmp_path):
    from xplique_ext.commons.warnings import XpliqueExtWarning
    from xplique_ext.text import load_word_vectors

    f = _glove_file(tmp_path / "v.txt", ["Good", "Bad"], dim=3, header=False)
    with pytest.warns(XpliqueExtWarning, match="no word of `vocabulary`.*every row is random"):
        m, found = load_word_vectors(f, ["", "[UNK]", "good", "bad"])
    assert found == 0 and m.shape == (4, 3)


def test_set_embedding_freezes_and_checks_shape():
    from xplique_ext.text import build_cnn_classifier, set_embedding

    model = build_cnn_classifier(20, sequence_length=6, embedding_dim=4, filters=2)
    m = np.arange(80, dtype=np.float32).reshape(20, 4)
    set_embedding(model, m, trainable=False)
    emb = model.get_layer("embedding")
    assert not emb.trainable
    np.testing.assert_array_equal(emb.get_weights()[0], m)
    with pytest.raises(ValueError, match="shape"):
        set_embedding(model, m[:, :3])
