"""The voyage example of the report (Tables 5 and 6, Figures 3, 11, 13 and 15), shipped
as package data."""

from __future__ import annotations

import os
import shutil
from importlib import resources
from typing import List, Tuple, Union

from ..commons.files import atomic_write, same_file
from ..commons.params import PATH, Options, validate_params

__all__ = ["EXAMPLE_FILES", "VOYAGE_RULES", "example_path", "copy_examples", "load_voyage"]

#: Files shipped in ``xplique_ext/rules/data``.
EXAMPLE_FILES = (
    "voyage.names",
    "voyage.data",
    "voyage.test",
    "voyage.cn2.unordered.pbm",
    "voyage.cn2.ordered.pbm",
    "voyage.c45rules.pbm",
)
#: Rule file of each evaluation mode (Figures 11, 13 and 15 of the report).
VOYAGE_RULES = {
    "unordered": "voyage.cn2.unordered.pbm",
    "ordered": "voyage.cn2.ordered.pbm",
    "inter-class": "voyage.c45rules.pbm",
}


@validate_params({"name": [Options(EXAMPLE_FILES)]})
def example_path(name: str) -> str:
    """Path of a shipped example file (one of :data:`EXAMPLE_FILES`).

    Examples
    --------
    >>> os.path.basename(example_path("voyage.names"))
    'voyage.names'
    """
    return str(resources.files("xplique_ext.rules").joinpath("data", name))


@validate_params({"directory": [PATH]})
def copy_examples(directory: Union[str, os.PathLike]) -> List[str]:
    """Copy the example files into ``directory`` (created if needed); returns the paths.

    Each file is written whole or not at all (:func:`~xplique_ext.commons.files.atomic_write`).
    """
    os.makedirs(directory, exist_ok=True)
    return [
        _copy_file(example_path(name), os.path.join(os.fspath(directory), name))
        for name in EXAMPLE_FILES
    ]


def _copy_file(source: str, destination: str) -> str:
    """Copy the bytes of ``source`` to ``destination`` (as ``shutil.copyfile`` does, through
    the package's one writer); returns ``destination``."""
    if same_file(source, destination):
        raise shutil.SameFileError(f"{source!r} and {destination!r} are the same file")
    with open(source, "rb") as reader, atomic_write(destination, "wb") as writer:
        shutil.copyfileobj(reader, writer)
    return destination


@validate_params({"mode": [Options(list(VOYAGE_RULES))], "split": [Options(["test", "train"])]})
def load_voyage(mode: str = "unordered", split: str = "test") -> Tuple[RuleSet, Dataset]:  # noqa: F821
    """The voyage rules of ``mode`` and the ``test`` (Table 6) or ``train`` (Table 5) examples.

    Examples
    --------
    >>> rules, data = load_voyage("ordered")
    >>> len(rules), data.n_examples
    (4, 15)
    """
    from .datafile import read_data
    from .pbm import read_rules

    data = example_path("voyage.test" if split == "test" else "voyage.data")
    return read_rules(example_path(VOYAGE_RULES[mode])), read_data(
        data, example_path("voyage.names")
    )
