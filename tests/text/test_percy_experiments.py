"""benchmarks/percy_experiments.py at a tiny size: the grid of Table 3, the layout of
Tables 4-5, the Kendall tau lines of Figure 4 and its plot, and the data it loads."""

import importlib.util
import re
from pathlib import Path

import numpy as np
import pytest

from tests.text.helpers import glove_file, hub_vocabulary

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def experiments():
    spec = importlib.util.spec_from_file_location(
        "percy_experiments", ROOT / "benchmarks" / "percy_experiments.py"
    )
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


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
    vec = glove_file(tmp_path / "glove.txt", words[: len(words) // 2])
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


def _run_hub_grid(experiments, tmp_path, capsys, tiny_bert, models):
    """hub:NAME with an in-memory tiny BERT: the classifiers (distilled/plain x
    frozen/fine-tuned) over its contextual token embeddings, trained and scored; the
    frozen ones leave the backbone's weights as they were, the fine-tuned ones move them;
    attributions are one per word."""
    from xplique_ext.text import IntegratedGradientsTokenExplainer, generate_sentences

    _, pre, backbone = tiny_bert(hub_vocabulary(), sequence_length=28, seed=0)
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
