"""The papers' datasets in their published formats, written here; nothing is downloaded."""

from __future__ import annotations

import sys
import types

import numpy as np
import pytest

from tests.params_cases import iter_invalid_cases, valid_arguments
from xplique_ext.commons.params import parameter_constraints
from xplique_ext.commons.warnings import XpliqueExtWarning
from xplique_ext.text import adapt_text_model, load_sentiment_dataset

# GLUE SST-2: header, tab-separated, no quoting (a sentence may hold quotes), a trailing space
SST2_DEV = (
    "sentence\tlabel\n"
    "it 's a charming and often affecting journey . \t1\n"
    "the plot is dull , but the cast shines \t1\n"
    "unflinchingly bleak and desperate \t0\n"
    'a "fun" film , yet it drags \t0\n'
)


SST2_TEST = "index\tsentence\n0\tuneasy mishmash of styles and genres .\n"


# Sentiment140: six quoted columns, no header, Latin-1 (the café below is one byte, 0xe9)
S140_ROWS = [
    (
        "0",
        "1467810369",
        "Mon Apr 06 22:19:45 PDT 2009",
        "NO_QUERY",
        "user_a",
        "is upset that he can't update his Facebook, but it's fine",
    ),
    ("4", "1467822272", "Mon Apr 06 22:22:45 PDT 2009", "NO_QUERY", "user_b", "I love the café"),
    ("2", "1467822273", "Mon May 11 03:17:40 UTC 2009", "kindle2", "user_c", "reading my kindle2"),
    (
        "4",
        "1467822274",
        "Mon May 11 03:18:03 UTC 2009",
        "kindle2",
        "user_d",
        "Fair enough. But i have the Kindle2 and i think it's perfect",
    ),
]


def _csv(rows) -> bytes:
    lines = [",".join(f'"{field}"' for field in row) for row in rows]
    return ("\n".join(lines) + "\n").encode("latin-1")


@pytest.fixture
def sst2_dir(tmp_path):
    (tmp_path / "dev.tsv").write_text(SST2_DEV, encoding="utf-8")
    (tmp_path / "test.tsv").write_text(SST2_TEST, encoding="utf-8")
    return tmp_path


@pytest.fixture
def s140_file(tmp_path):
    path = tmp_path / "testdata.manual.2009.06.14.csv"
    path.write_bytes(_csv(S140_ROWS))
    return path


# --------------------------------------------------------------------------- SST-2
def test_sst2_tsv_known_answer(sst2_dir):
    sentences, labels = load_sentiment_dataset("sst2", "validation", path=sst2_dir)
    assert sentences == [
        "it 's a charming and often affecting journey .",
        "the plot is dull , but the cast shines",
        "unflinchingly bleak and desperate",
        'a "fun" film , yet it drags',
    ]
    assert labels.dtype == np.int64 and labels.tolist() == [1, 1, 0, 0]
    # the file itself, the 'dev' alias, and a str path give the same
    again = load_sentiment_dataset("sst2", "dev", path=str(sst2_dir / "dev.tsv"))
    assert again[0] == sentences and again[1].tolist() == labels.tolist()


def test_sst2_with_a_byte_order_mark(tmp_path):
    path = tmp_path / "dev.tsv"
    path.write_bytes(b"\xef\xbb\xbf" + SST2_DEV.encode("utf-8"))
    sentences, labels = load_sentiment_dataset("sst2", "validation", path=path)
    assert len(sentences) == 4 and labels.tolist() == [1, 1, 0, 0]


def test_sst2_contrastive_only_keeps_rule_sentences(sst2_dir):
    sentences, labels = load_sentiment_dataset(
        "sst2", "validation", path=sst2_dir, contrastive_only=True
    )
    assert sentences == ["the plot is dull , but the cast shines", 'a "fun" film , yet it drags']
    assert labels.tolist() == [1, 0]
    # another rule table: 'and' as a keyword, the defaults replaced
    from xplique_ext.text import RuleTable

    s, _ = load_sentiment_dataset(
        "sst2", "validation", path=sst2_dir, contrastive_only=True, rules=RuleTable({"and": "B"})
    )
    assert s == [
        "it 's a charming and often affecting journey .",
        "unflinchingly bleak and desperate",
    ]


def test_sst2_unlabelled_glue_test_split_says_what_to_do(sst2_dir):
    with pytest.raises(ValueError, match="split='validation'"):
        load_sentiment_dataset("sst2", path=sst2_dir)  # split='test' by default


@pytest.mark.parametrize(
    "text, match",
    [
        ("", "is empty"),
        ("sentence\tlabel\n", "holds no sentence"),
        ("text\tpolarity\nfine\t1\n", "header must hold the columns 'sentence' and 'label'"),
        ("sentence\tlabel\ngood\t1\nbad\n", "line 3: expected 2 tab-separated fields"),
        ("sentence\tlabel\ngood\t1\nbad\t4\n", "line 3: the label must be 0 or 1, got '4'"),
        ("sentence\tlabel\ngood\tpositive\n", "the label must be 0 or 1"),
    ],
)
def test_sst2_malformed_files(tmp_path, text, match):
    path = tmp_path / "dev.tsv"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(ValueError, match=match):
        load_sentiment_dataset("sst2", "validation", path=path)


# --------------------------------------------------------------------------- Sentiment140
def test_sentiment140_csv_known_answer(s140_file):
    with pytest.warns(XpliqueExtWarning, match="1 neutral tweets"):
        sentences, labels = load_sentiment_dataset("sentiment140", path=s140_file.parent)
    assert sentences == [S140_ROWS[0][5], "I love the café", S140_ROWS[3][5]]
    assert labels.tolist() == [0, 1, 1]
    with pytest.warns(XpliqueExtWarning):
        s, y = load_sentiment_dataset("sentiment140", "test", path=s140_file, contrastive_only=True)
    assert s == [S140_ROWS[0][5], S140_ROWS[3][5]]  # "but" and "But"
    assert y.tolist() == [0, 1]


@pytest.mark.parametrize(
    "rows, match",
    [
        ([("0", "1", "d", "q", "u")], "line 1: Sentiment140's CSV has six columns"),
        ([S140_ROWS[0], ("1", "2", "d", "q", "u", "meh")], "line 2: the polarity must be 0"),
        ([("positive", "2", "d", "q", "u", "meh")], "got 'positive'"),
    ],
)
def test_sentiment140_malformed_files(tmp_path, rows, match):
    path = tmp_path / "s140.csv"
    path.write_bytes(_csv(rows))
    with pytest.raises(ValueError, match=match):
        load_sentiment_dataset("sentiment140", "test", path=path)


@pytest.mark.parametrize(
    "name, content, match",
    [
        (
            "sst2",
            b"PK\x03\x04\x14\x00\x08\x00\xff\xfe\x9c",
            r"is not GLUE SST-2's TSV \(UTF-8\): not a UTF-8 text file .*NUL bytes.*"
            "pass the extracted file",
        ),  # the zip archive itself: NUL bytes, refused by the one text decoder
        (
            "sst2",
            b"sentence\tlabel\n" + b"a" * 200_000 + b"\t1\n",
            r"is not GLUE SST-2.s TSV \(UTF-8\): field larger than",
        ),
        (
            "sentiment140",
            b'"0","1","d","q","u","' + b"a" * 200_000 + b'"\n',
            "is not Sentiment140's",
        ),
    ],
)
def test_unreadable_files_are_value_errors_naming_path(tmp_path, name, content, match):
    # a raw UnicodeDecodeError / csv.Error before
    path = tmp_path / "file"
    path.write_bytes(content)
    with pytest.raises(ValueError, match=f"`path` '.*file' {match}"):
        load_sentiment_dataset(name, "test" if name == "sentiment140" else "validation", path=path)


def test_sentiment140_empty_file(tmp_path):
    path = tmp_path / "s140.csv"
    path.write_bytes(b"")
    with pytest.raises(ValueError, match="is empty"):
        load_sentiment_dataset("sentiment140", "test", path=path)


def test_sentiment140_saved_in_utf8_is_read_as_utf8(tmp_path):
    """A copy saved in UTF-8 was read as Latin-1 without a word ('cafÃ© â\x80\x99s'):
    UTF-8 first, Latin-1 only for the bytes that are not UTF-8, line by line in a file
    that mixes both."""
    rows = [
        ("0", "1", "d", "q", "u", "the café’s coffee was cold"),
        ("4", "2", "d", "q", "u", "naïve but fun"),
    ]
    lines = [",".join(f'"{field}"' for field in row) for row in rows]
    path = tmp_path / "s140.csv"
    path.write_bytes((lines[0] + "\n").encode("utf-8") + (lines[1] + "\n").encode("latin-1"))
    sentences, labels = load_sentiment_dataset("sentiment140", "test", path=path)
    assert sentences == ["the café’s coffee was cold", "naïve but fun"]
    assert labels.tolist() == [0, 1]
    utf16 = tmp_path / "s140_utf16.csv"
    utf16.write_bytes(lines[0].encode("utf-16"))
    with pytest.raises(ValueError, match="is not Sentiment140's CSV .*not a UTF-8 text file"):
        load_sentiment_dataset("sentiment140", "test", path=utf16)


def test_sentiment140_is_read_as_latin1_not_utf8(tmp_path, s140_file):
    raw = s140_file.read_bytes()
    assert "café".encode("latin-1") in raw and "café".encode() not in raw
    with pytest.warns(XpliqueExtWarning):
        sentences, _ = load_sentiment_dataset("sentiment140", path=s140_file)
    assert "I love the café" in sentences


# --------------------------------------------------------------------------- arguments
def test_bad_arguments_name_the_parameter(tmp_path, sst2_dir):
    with pytest.raises(ValueError, match="`name` must be one of"):
        load_sentiment_dataset("imdb", path=sst2_dir)
    with pytest.raises(TypeError, match="`name` must be one of"):
        load_sentiment_dataset(2)
    with pytest.raises(ValueError, match="`split` must be one of"):
        load_sentiment_dataset("sst2", "held-out", path=sst2_dir)
    with pytest.raises(ValueError, match="`split` must be one of"):
        load_sentiment_dataset("sentiment140", "validation", path=sst2_dir)
    with pytest.raises(TypeError, match="`path` must be a str or a path"):
        load_sentiment_dataset("sst2", "validation", path=3)
    with pytest.raises(TypeError, match="`contrastive_only` must be a bool"):
        load_sentiment_dataset("sst2", "validation", path=sst2_dir, contrastive_only="yes")
    with pytest.raises(FileNotFoundError, match="does not exist; download GLUE's SST-2"):
        load_sentiment_dataset("sst2", "validation", path=tmp_path / "nope.tsv")
    with pytest.raises(FileNotFoundError, match="train.tsv' does not exist; download GLUE"):
        load_sentiment_dataset("sst2", "train", path=sst2_dir)  # a folder without the file


# --------------------------------------------------------------------------- no path
@pytest.fixture
def no_libraries(monkeypatch):
    # None in sys.modules makes `import` raise ImportError, installed or not
    monkeypatch.setitem(sys.modules, "tensorflow_datasets", None)
    monkeypatch.setitem(sys.modules, "datasets", None)


@pytest.mark.parametrize(
    "name, file", [("sst2", "SST-2.zip"), ("sentiment140", "trainingandtestdata.zip")]
)
def test_without_path_or_libraries_says_what_to_install(no_libraries, name, file):
    with pytest.raises(ImportError) as info:
        load_sentiment_dataset(name, "train")
    message = str(info.value)
    assert 'pip install "xplique_ext[datasets]"' in message
    assert "tensorflow-datasets" in message and file in message and "path=" in message


def test_through_tensorflow_datasets(no_libraries, monkeypatch):
    calls = []

    def load(name, split):
        calls.append((name, split))
        if name == "glue/sst2":
            return [
                {"sentence": b"good , but long", "label": 1, "idx": 0},
                {"sentence": b"bad", "label": 0, "idx": 1},
            ]
        return [
            {"text": b"meh", "polarity": 2},
            {"text": b"yay", "polarity": 4},
            {"text": b"nay", "polarity": 0},
        ]

    fake = types.SimpleNamespace(load=load, as_numpy=lambda data: data)
    monkeypatch.setitem(sys.modules, "tensorflow_datasets", fake)
    s, y = load_sentiment_dataset("sst2", "validation", contrastive_only=True)
    assert (s, y.tolist()) == (["good , but long"], [1])
    with pytest.warns(XpliqueExtWarning, match="1 neutral"):
        s, y = load_sentiment_dataset("sentiment140", "test")
    assert (s, y.tolist()) == (["yay", "nay"], [1, 0])
    assert calls == [("glue/sst2", "validation"), ("sentiment140", "test")]
    fake.load = lambda name, split: [{"sentence": b"hidden", "label": -1}]
    with pytest.raises(ValueError, match="split='validation'"):
        load_sentiment_dataset("sst2", "test")


def test_through_hugging_face_datasets(no_libraries, monkeypatch):
    calls = []

    def load_dataset(*args, split):
        calls.append((args, split))
        return {"sentence": ["fine yet slow"], "label": [0]}

    monkeypatch.setitem(sys.modules, "datasets", types.SimpleNamespace(load_dataset=load_dataset))
    s, y = load_sentiment_dataset("sst2", "train")
    assert (s, y.tolist()) == (["fine yet slow"], [0])
    assert calls == [(("nyu-mll/glue", "sst2"), "train")]

    def offline(*args, split):
        raise ConnectionError("no network")

    monkeypatch.setitem(sys.modules, "datasets", types.SimpleNamespace(load_dataset=offline))
    with pytest.raises(RuntimeError, match="no network.*download GLUE's SST-2"):
        load_sentiment_dataset("sst2", "train")


# --------------------------------------------------------------------------- declarations
DECLARED = {"load_sentiment_dataset": load_sentiment_dataset, "adapt_text_model": adapt_text_model}


CASES = [
    pytest.param(name, param, value, error, id=f"{name}-{param}-{index}")
    for name, entry in DECLARED.items()
    for param, index, value, error in iter_invalid_cases(entry)
]


def test_the_entry_points_declare_their_parameters():
    for entry in DECLARED.values():
        assert parameter_constraints(entry) is not None
    assert {c.values[1] for c in CASES} >= {
        "name",
        "split",
        "path",
        "contrastive_only",
        "model",
        "mask_string",
        "activation",
    }


@pytest.mark.parametrize("name, param, value, error", CASES)
def test_invalid_value_names_the_parameter(name, param, value, error):
    entry = DECLARED[name]
    kwargs = {**valid_arguments(entry), param: value}
    with pytest.raises(error, match=f"`{param}` must be .*, got "):
        entry(**kwargs)


def test_load_sentiment_dataset_error_quotes_the_split_passed(tmp_path):
    from xplique_ext.text import load_sentiment_dataset

    file = tmp_path / "s140.csv"
    file.write_text('"4","1","d","q","u","great"\n')
    # was: "`split` must be one of ['train', 'test'], got 'validation'"
    with pytest.raises(
        ValueError,
        match=r"`split` must be one of \['train', 'test'\], "
        r"got 'dev'",
    ):
        load_sentiment_dataset("sentiment140", "dev", path=file)
    (tmp_path / "dev.tsv").write_text("sentence\tlabel\na mess\t0\n")
    assert load_sentiment_dataset("sst2", "dev", path=tmp_path)[0] == ["a mess"]


def test_library_bytes_go_through_the_text_decoder(no_libraries, monkeypatch):
    # bytes that are not UTF-8 are read as Latin-1, as in the files: no UnicodeDecodeError
    def load(name, split):
        return [
            {"sentence": "café , but".encode("latin-1"), "label": 1, "idx": 0},
            {"sentence": "café’s".encode(), "label": 0, "idx": 1},
        ]

    fake = types.SimpleNamespace(load=load, as_numpy=lambda data: data)
    monkeypatch.setitem(sys.modules, "tensorflow_datasets", fake)
    s, y = load_sentiment_dataset("sst2", "validation")
    assert (s, y.tolist()) == (["café , but", "café’s"], [1, 0])
