"""Guards of the sixth lean-core pass (issue 18) on the text models, rules and adapters:
each removed or rewritten check still gives the same named error, and each rewritten
computation the same values (known answers written here)."""

from __future__ import annotations

import numpy as np
import pytest

from xplique_ext.text import BagOfWordsModel
from xplique_ext.text.classifier import TextClassifier
from xplique_ext.text.conjunctions import DEFAULT_RULES, RuleTable, resolve_rules
from xplique_ext.text.distillation import rule_teacher


def test_a_text_classifier_as_model_is_refused_by_the_declared_constraint():
    bow = BagOfWordsModel({"good": 1.0})
    clf = TextClassifier(bow, bow.tokenizer)
    with pytest.raises(TypeError, match=r"`model` must be callable, got .*TextClassifier"):
        TextClassifier(clf)


def test_bag_of_words_id_weights_known_answer():
    # vocabulary: '', '[UNK]', then the sorted weights' words and keywords; 'unk' (a word)
    # is not '[UNK]' (the out-of-vocabulary id keeps weight 0)
    bow = BagOfWordsModel({"good": 2.0, "Bad": -1, "unk": 0.5})
    assert bow.vocabulary == ["", "[UNK]", "bad", "but", "good", "though", "unk", "while", "yet"]
    assert bow.id_weights.dtype == np.float64
    assert bow.id_weights.tolist() == [0.0, 0.0, -1.0, 0.0, 2.0, 0.0, 0.5, 0.0, 0.0]


def test_rule_tables_default_empty_and_replacing():
    assert dict(resolve_rules()) == DEFAULT_RULES
    assert dict(resolve_rules({})) == DEFAULT_RULES
    assert dict(resolve_rules({"however": "b", "while": None})) == {
        "but": "B",
        "yet": "B",
        "though": "A",
        "however": "B",
    }
    table = RuleTable({"But": "B"})
    assert resolve_rules(table) is table and dict(table) == {"but": "B"}
    with pytest.raises(ValueError, match="`rules` must hold at least one keyword"):
        RuleTable({})
    with pytest.raises(ValueError, match=r"`rules\['but'\]` must be 'A' or 'B'"):
        RuleTable({"but": None})


def test_rule_teacher_names_the_first_row_not_summing_to_one():
    message = r"`p_rule` rows must sum to 1 .* got a row summing to 0\.9$"
    with pytest.raises(ValueError, match=message):
        rule_teacher([[0.5, 0.5], [0.3, 0.7]], [[0.5, 0.5], [0.4, 0.5]])
    q = rule_teacher([[0.3, 0.7]], [[0.9, 0.1]], C=6, logic="average")
    expected = np.array([0.3, 0.7]) * np.exp(-6 * (1 - 0.5 * (1 + np.array([0.9, 0.1]))))
    np.testing.assert_allclose(q[0], expected / expected.sum(), rtol=1e-12)


def test_hub_adapter_cuts_pieces_at_the_shortest_limit(tiny_bert):
    keras_hub = pytest.importorskip("keras_hub")
    from xplique_ext.text.hub import adapt_text_model

    vocab = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "a", "good", "film"]
    tokenizer, pre, backbone = tiny_bert(vocab, 12)
    task = keras_hub.models.BertTextClassifier(backbone, num_classes=2, preprocessor=pre)
    model, tok = adapt_text_model(task)
    assert model.max_pieces == 10  # min(preprocessor 12, backbone 12) - 2
    model, tok = adapt_text_model(task, tokenizer)  # no length but the backbone's
    assert model.max_pieces == 10
    assert adapt_text_model(model)[1] is model.tokenizer
    other = adapt_text_model(model, mask_string="ZZZ")[1]
    assert other is not model.tokenizer and other.mask_string == "ZZZ"
    with pytest.raises(TypeError, match="`backbone` must be a keras-hub Backbone"):
        from xplique_ext.text.hub import build_hub_classifier

        build_hub_classifier(task)
