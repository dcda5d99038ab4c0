"""progress_bar: tqdm only when the bar is on."""

import io
import subprocess
import sys

import pytest

from xplique_ext.commons.progress import progress_bar


def test_off_iterates_and_does_not_import_tqdm():
    code = (
        "import sys\n"
        "from xplique_ext.commons.progress import progress_bar\n"
        "assert list(progress_bar(range(4))) == [0, 1, 2, 3]\n"
        "with progress_bar(total=5) as bar:\n"
        "    bar.update(5); bar.set_postfix(loss=1.0)\n"
        "print('tqdm' in sys.modules)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout
    assert out.strip() == "False"


def test_on_is_a_tqdm_bar(monkeypatch):
    from tqdm.auto import tqdm

    monkeypatch.setattr(sys, "stderr", io.StringIO())
    bar = progress_bar(range(3), enabled=True, desc="demo")
    assert isinstance(bar, tqdm)
    assert list(bar) == [0, 1, 2]
    manual = progress_bar(enabled=True, total=4, unit="map")
    manual.update(4)
    assert manual.n == 4
    manual.close()


def test_off_without_iterable_refuses_iteration_and_bad_flag():
    with pytest.raises(TypeError, match="nothing to iterate"):
        iter(progress_bar(total=3))
    with pytest.raises(TypeError, match="`progress` must be a bool"):
        progress_bar(range(2), enabled="yes")
