"""PERCY on Keras text models.

Tokens, a seedable sentence generator with a shipped sentiment lexicon, the paper's CNN
and LSTM backbones, a bag-of-words logistic model with known token contributions, token
attributions from LIME, SHAP and Integrated Gradients, the Local Lipschitz estimate,
iterative rule knowledge distillation (Hu et al. 2016), agreement between frameworks,
token highlighting plots, the loaders of the paper's datasets (SST-2, Sentiment140),
and keras-hub transformers (see :mod:`.hub`). The metric itself is
:class:`xplique_ext.metrics.PERCY`.
"""

from ..commons.lazy import lazy_exports
from .agreement import percy_pearson_agreement, percy_rank_agreement
from .classifier import TextClassifier
from .conjunctions import DEFAULT_RULES, RuleTable, resolve_rules
from .data import Lexicon, generate_sentences, load_lexicon
from .embeddings import load_word_vectors, set_embedding
from .explainers import (
    IntegratedGradientsTokenExplainer,
    LimeTokenExplainer,
    ShapTokenExplainer,
    TokenAttributionExplainer,
)
from .hub import adapt_text_model, build_hub_classifier, load_hub_backbone
from .lipschitz import LocalLipschitzEstimate, TextLocalLipschitzEstimate
from .loaders import load_sentiment_dataset
from .models import (
    BagOfWordsModel,
    build_cnn_classifier,
    build_lstm_classifier,
    make_vectorizer,
    train_classifier,
)
from .plots import (
    HighlightedText,
    highlight_html,
    percy_examples_html,
    plot_agreement,
    plot_highlight,
    plot_lipschitz,
    plot_percy_scores,
)
from .tokens import find_keyword, normalize_token, whitespace_tokens

__all__ = [
    "BagOfWordsModel",
    "DEFAULT_RULES",
    "HighlightedText",
    "IntegratedGradientsTokenExplainer",
    "Lexicon",
    "LimeTokenExplainer",
    "LocalLipschitzEstimate",
    "RuleDistillation",
    "RuleTable",
    "ShapTokenExplainer",
    "TextClassifier",
    "TextLocalLipschitzEstimate",
    "TokenAttributionExplainer",
    "adapt_text_model",
    "build_cnn_classifier",
    "build_hub_classifier",
    "build_lstm_classifier",
    "distillation_pi",
    "find_keyword",
    "generate_sentences",
    "highlight_html",
    "load_hub_backbone",
    "load_lexicon",
    "load_sentiment_dataset",
    "load_word_vectors",
    "make_vectorizer",
    "normalize_token",
    "percy_examples_html",
    "percy_pearson_agreement",
    "percy_rank_agreement",
    "plot_agreement",
    "plot_highlight",
    "plot_lipschitz",
    "plot_percy_scores",
    "resolve_rules",
    "rule_conjuncts",
    "rule_teacher",
    "set_embedding",
    "train_classifier",
    "whitespace_tokens",
]


#: :mod:`.distillation` subclasses keras.Model: its names are resolved on first use, so that
#: ``import xplique_ext.text`` loads no TensorFlow
__getattr__, __dir__ = lazy_exports(
    __name__,
    {".distillation": ["RuleDistillation", "distillation_pi", "rule_conjuncts", "rule_teacher"]},
)
