"""Hypothesis strategies for the property tests of the three parsers (``.names``,
``.data``, PBM): the voyage example files, mutated a few characters at a time, and
arbitrary texts."""

from hypothesis import HealthCheck, settings
from hypothesis import strategies as st

from xplique_ext.rules import example_path, read_names

with open(example_path("voyage.names"), encoding="utf-8") as f:
    NAMES_TEXT = f.read()
with open(example_path("voyage.test"), encoding="utf-8") as f:
    DATA_TEXT = f.read()
with open(example_path("voyage.cn2.unordered.pbm"), encoding="utf-8") as f:
    RULES_TEXT = f.read()
NAMES = read_names(example_path("voyage.names"))

ALPHABET = st.sampled_from(list(' \t\n,.:;()|"\\=<>!?[]{}*+-xR0123456789abcINFORDTHEAULC_é'))
FUZZ = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@st.composite
def mutated(draw, base):
    """``base`` with a few characters deleted, inserted or replaced."""
    text = list(base)
    for _ in range(draw(st.integers(1, 6))):
        position = draw(st.integers(0, len(text)))
        action = draw(st.sampled_from(["insert", "delete", "replace"]))
        char = draw(ALPHABET)
        if action == "insert" or not text:
            text.insert(position, char)
        elif action == "delete":
            del text[min(position, len(text) - 1)]
        else:
            text[min(position, len(text) - 1)] = char
    return "".join(text)


def texts(base):
    """Arbitrary texts, texts of the parsers' characters, and ``base`` mutated."""
    return st.one_of(st.text(max_size=200), st.text(ALPHABET, max_size=200), mutated(base))
