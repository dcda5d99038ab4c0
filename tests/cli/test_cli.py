"""The ``xplique-ext`` command line (:mod:`xplique_ext.cli`): --version, plain help
with defaults, RST markup removed."""

import pytest

import xplique_ext
from xplique_ext.cli import build_parser, main, plain


def _help(command):
    with pytest.raises(SystemExit) as exit_info:
        build_parser().parse_args([command, "--help"])
    assert exit_info.value.code == 0


def test_version(capsys):
    with pytest.raises(SystemExit) as exit_info:
        main(["--version"])
    assert exit_info.value.code == 0
    assert capsys.readouterr().out.strip() == f"xplique-ext {xplique_ext.__version__}"


@pytest.mark.parametrize("command", ["demo", "rules", "fire"])
def test_help_is_plain_and_shows_defaults(command, capsys):
    _help(command)
    text = capsys.readouterr().out
    assert "``" not in text and ":class:" not in text and ":func:" not in text
    assert "(default: " in text
    assert "(default: None)" not in text and "(default: False)" not in text
    for line in text.splitlines():  # a default never shown twice for one option
        assert line.count("(default:") <= 1


def test_demo_help_names_its_defaults(capsys):
    _help("demo")
    text = capsys.readouterr().out
    assert "(default: 3000)" in text and "(default: fidelity,rules,text)" in text


def test_plain_removes_rst_markup():
    assert (
        plain("``xplique-ext demo`` uses :class:`~xplique_ext.metrics.MuFidelity` and `x`")
        == "xplique-ext demo uses xplique_ext.metrics.MuFidelity and x"
    )
