"""keras-hub entry points (``xplique_ext/text/hub.py``): the heads built on a backbone, and
keras-hub imported only for the models that need it."""

from __future__ import annotations

import numpy as np
import pytest

from tests.text.helpers import hub_vocabulary


def test_other_models_never_import_keras_hub():
    """keras-hub stays optional: explaining a model that is not a keras-hub one does not
    import it (installed or not), nor does importing the text sub-package."""
    import subprocess
    import sys
    import textwrap

    code = textwrap.dedent(
        """
        import sys
        from xplique_ext.text import BagOfWordsModel, TextClassifier
        bow = BagOfWordsModel({"good": 2.0, "bad": -2.0})
        TextClassifier(bow, bow.tokenizer).predict_proba(["a good film"])
        print("keras_hub" in sys.modules, "xplique_ext.text.hub" in sys.modules)
        """
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=300
    )
    assert out.stdout.split()[-2:] == ["False", "True"]  # the adapter ran, keras-hub not


@pytest.mark.parametrize("head", ["cnn", "lstm"])
def test_hub_heads_ignore_padding_and_validate(head, tiny_bert):
    """The heads read the real word pieces only: more padding gives the same
    probabilities (the LSTM's mask, the CNN's zeroed padding); bad arguments are named."""
    keras_hub = pytest.importorskip("keras_hub")
    from xplique_ext.text import build_hub_classifier

    tokenizer, pre, backbone = tiny_bert(hub_vocabulary(), sequence_length=40, seed=1)
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
