"""Rule metrics: contingency tables of rule sets, rule measures, FiRe and Qs, PBM rule files.

Readers and writers
    :func:`read_names` / :func:`parse_names` (``.names``), :func:`read_data` /
    :func:`parse_data` / :meth:`Dataset.from_frame` (``.data`` or DataFrames),
    :func:`read_rules` / :func:`parse_rules` and :meth:`RuleSet.to_string` (PBM rules, plain
    and extended).
Evaluation
    :func:`evaluate_rules` (unordered, ordered and inter-class ordered modes, vectorised),
    :func:`rule_measures` (Eq. 1-19, Laplace, lift, chi-square), :class:`RuleMetrics`,
    :func:`predict_rules`.
FiRe and Qs
    :func:`score_rules` (a rule set's FiRe and Qs). :class:`FiRe`, :class:`QsScore` and the
    ``fire_*`` functions are exported by :mod:`xplique_ext.metrics` (implemented in
    :mod:`xplique_ext.rules.fire`, which needs no TensorFlow).
Adapters
    :func:`tree_to_rules` and :func:`tree_names` (scikit-learn decision trees);
    :func:`ripper_to_rules` (``wittgenstein`` RIPPER/IREP) and :func:`rule_list_to_rules`
    (``imodels`` greedy rule lists and OneR), with the ``[rulelearners]`` extra (imported
    only when called).

The per-example loop that follows Algorithms 1-3 of the report, the tests' oracle for
:func:`evaluate_rules`, is ``tests/rules/rules_reference.py``.

Modules: :mod:`~xplique_ext.rules.dataset` (the data model),
:mod:`~xplique_ext.rules.encoding` (the encoding of values, for every reader),
:mod:`~xplique_ext.rules.datafile` (reading and writing ``.data`` files),
:mod:`~xplique_ext.rules.on_dask` (Dask: :func:`read_data_dask` and the partitioned
evaluation, imported only when Dask is used).

No TensorFlow is needed by this sub-package.
"""

from .checking import check_rules
from .datafile import parse_data, read_data, write_data
from .dataset import Dataset
from .encoding import Column
from .errors import DataParseError, NamesParseError, ParseError, RuleParseError
from .evaluation import (
    MODES,
    ContingencyTables,
    RuleEvaluation,
    RuleMetrics,
    covered_mask,
    evaluate_rules,
    predict_rules,
)
from .examples import EXAMPLE_FILES, VOYAGE_RULES, copy_examples, example_path, load_voyage
from .learners import ripper_to_rules, rule_list_to_rules
from .measures import MEASURES, rule_measures
from .names import ATTRIBUTE_TYPES, Attribute, Names, parse_names, read_names, write_names
from .pbm import (
    OPERATORS,
    Condition,
    PBMHeader,
    Rule,
    RuleSet,
    parse_rules,
    read_rules,
    write_rules,
)
from .plots import plot_alpha_beta, plot_fire_isolines, plot_rule_measures
from .scoring import RuleSetScore, score_rules
from .trees import tree_names, tree_to_rules

__all__ = [
    "ATTRIBUTE_TYPES",
    "RuleSetScore",
    "plot_alpha_beta",
    "plot_fire_isolines",
    "plot_rule_measures",
    "ripper_to_rules",
    "rule_list_to_rules",
    "score_rules",
    "tree_names",
    "tree_to_rules",
    "Attribute",
    "Column",
    "Condition",
    "ContingencyTables",
    "DataParseError",
    "Dataset",
    "EXAMPLE_FILES",
    "MEASURES",
    "MODES",
    "Names",
    "NamesParseError",
    "OPERATORS",
    "PBMHeader",
    "ParseError",
    "Rule",
    "RuleEvaluation",
    "RuleMetrics",
    "RuleParseError",
    "RuleSet",
    "VOYAGE_RULES",
    "check_rules",
    "copy_examples",
    "covered_mask",
    "evaluate_rules",
    "example_path",
    "load_voyage",
    "parse_data",
    "parse_names",
    "parse_rules",
    "predict_rules",
    "read_data",
    "read_data_dask",
    "read_names",
    "read_rules",
    "rule_measures",
    "write_data",
    "write_names",
    "write_rules",
]


def __getattr__(name):
    # read_data_dask lives in the Dask module, imported only when it is asked for
    if name == "read_data_dask":
        from .on_dask import read_data_dask

        return read_data_dask
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
