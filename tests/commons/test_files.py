"""Output files (:mod:`xplique_ext.commons.files`): written whole or not at all, links
followed, permissions kept, and every writer of the package going through the one helper."""

import os
import stat

import numpy as np
import pytest

from xplique_ext.commons.files import atomic_write, check_writable, same_file

OLD = b"old content, line 1\nline 2\n"


class Interrupted(Exception):
    """Raised in the middle of a write."""


def _interrupt(path, mode="w", error=Interrupted):
    """Start writing ``path`` and raise ``error`` after half of the new content."""
    with pytest.raises(error):
        with atomic_write(path, mode, encoding=None if "b" in mode else "utf-8") as handle:
            handle.write("new half" if mode == "w" else b"new half")
            handle.flush()
            raise error("stopped mid-write")


@pytest.fixture
def old_file(tmp_path):
    path = tmp_path / "out.txt"
    path.write_bytes(OLD)
    return path


def _leftovers(folder):
    return sorted(name for name in os.listdir(folder) if name.endswith(".tmp"))


def test_a_write_replaces_the_file_whole(old_file):
    with atomic_write(old_file, encoding="utf-8") as handle:
        handle.write("new\n")
    assert old_file.read_text(encoding="utf-8") == "new\n"
    assert _leftovers(old_file.parent) == []


@pytest.mark.parametrize("mode", ["w", "wb"])
@pytest.mark.parametrize("error", [Interrupted, KeyboardInterrupt])
def test_an_interrupted_write_leaves_the_old_file_byte_identical(old_file, mode, error):
    _interrupt(old_file, mode, error)
    assert old_file.read_bytes() == OLD
    assert _leftovers(old_file.parent) == []  # the temporary file is removed


def test_an_interrupted_write_creates_no_file(tmp_path):
    _interrupt(tmp_path / "new.txt")
    assert os.listdir(tmp_path) == []


def test_a_symbolic_link_is_followed_and_kept(old_file):
    link = old_file.parent / "link.txt"
    link.symlink_to(old_file)
    _interrupt(link)
    assert old_file.read_bytes() == OLD and link.is_symlink()
    with atomic_write(link, encoding="utf-8") as handle:
        handle.write("new\n")
    assert link.is_symlink() and old_file.read_text(encoding="utf-8") == "new\n"


def test_a_dangling_link_creates_its_target(tmp_path):
    link = tmp_path / "link.txt"
    link.symlink_to(tmp_path / "target.txt")
    with atomic_write(link, encoding="utf-8") as handle:
        handle.write("new\n")
    assert link.is_symlink() and (tmp_path / "target.txt").read_text() == "new\n"


def test_a_hard_link_keeps_the_old_content(old_file):
    other = old_file.parent / "other.txt"
    os.link(old_file, other)
    _interrupt(other)
    assert old_file.read_bytes() == OLD and other.read_bytes() == OLD
    with atomic_write(other, encoding="utf-8") as handle:
        handle.write("new\n")
    assert other.read_text() == "new\n" and old_file.read_bytes() == OLD  # not written through


def test_permission_bits_are_kept_or_given_as_open_would(old_file, tmp_path):
    old_file.chmod(0o640)
    with atomic_write(old_file, encoding="utf-8") as handle:
        handle.write("new\n")
    assert stat.S_IMODE(old_file.stat().st_mode) == 0o640
    umask = os.umask(0o022)
    try:
        with atomic_write(tmp_path / "new.txt", encoding="utf-8") as handle:
            handle.write("new\n")
    finally:
        os.umask(umask)
    assert stat.S_IMODE((tmp_path / "new.txt").stat().st_mode) == 0o644


def test_a_special_file_is_written_in_place():
    with atomic_write(os.devnull, encoding="utf-8") as handle:
        handle.write("gone\n")
    assert stat.S_ISCHR(os.stat(os.devnull).st_mode)
    check_writable(os.devnull)


@pytest.mark.parametrize(
    "where, error",
    [("folder", IsADirectoryError), ("missing/out.txt", FileNotFoundError)],
)
def test_unwritable_paths_raise_what_open_would(tmp_path, where, error):
    (tmp_path / "folder").mkdir()
    path = str(tmp_path / where)
    for attempt in (lambda: check_writable(path), lambda: _write(path)):
        with pytest.raises(error) as info:
            attempt()
        assert info.value.filename == path
    assert sorted(os.listdir(tmp_path)) == ["folder"]


def _write(path):
    with atomic_write(path, encoding="utf-8") as handle:
        handle.write("x")


def test_check_writable_creates_nothing(tmp_path):
    check_writable(tmp_path / "new.txt")
    link = tmp_path / "link.txt"
    link.symlink_to(tmp_path / "target.txt")
    check_writable(link)
    assert sorted(os.listdir(tmp_path)) == ["link.txt"]


def test_mode_is_checked(tmp_path):
    with pytest.raises(ValueError, match="`mode` must be one of"):
        with atomic_write(tmp_path / "x", "a"):
            pass


def test_same_file_follows_symbolic_and_hard_links(old_file):
    folder = old_file.parent
    (folder / "soft").symlink_to(old_file)
    os.link(old_file, folder / "hard")
    (folder / "other").write_bytes(OLD)
    assert same_file(old_file, folder / "soft") and same_file(folder / "hard", folder / "soft")
    assert same_file(str(old_file), folder / ".." / folder.name / "out.txt")
    assert not same_file(old_file, folder / "other")  # same bytes, another file
    assert not same_file(old_file, folder / "missing") and not same_file(None, old_file)


# -- the package's writers go through atomic_write ------------------------------------------
def _fail_mid_write(monkeypatch):
    """Make every file written through atomic_write raise after its first write."""
    import xplique_ext.commons.files as files

    real_open = open

    def failing_open(path, mode="r", **kwargs):
        handle = real_open(path, mode, **kwargs)
        if "w" in mode:
            real_write = handle.write

            def write(data):
                real_write(data[: len(data) // 2])
                raise Interrupted("disk full")

            handle.write = write
        return handle

    monkeypatch.setattr(files, "open", failing_open, raising=False)


def _writers(tmp_path):
    from xplique_ext.rules import load_voyage, write_data, write_names, write_rules

    rules, data = load_voyage()
    return {
        "write_rules": lambda path: write_rules(rules, path),
        "write_names": lambda path: write_names(data.names, path),
        "write_data": lambda path: write_data(data, path),
    }


@pytest.mark.parametrize("writer", ["write_rules", "write_names", "write_data"])
def test_rule_writers_leave_the_old_file_whole(old_file, monkeypatch, writer):
    write = _writers(old_file.parent)[writer]
    _fail_mid_write(monkeypatch)
    with pytest.raises(Interrupted):
        write(old_file)
    assert old_file.read_bytes() == OLD and _leftovers(old_file.parent) == []


def test_copy_examples_and_aixi_save_leave_the_old_file_whole(tmp_path, monkeypatch):
    from xplique_ext.datasets import load_aixi, make_aixi_color
    from xplique_ext.rules import copy_examples

    (tmp_path / "voyage.names").write_bytes(OLD)
    (tmp_path / "data.npz").write_bytes(OLD)
    dataset = make_aixi_color(2, image_size=32, function="suum", seed=0)
    _fail_mid_write(monkeypatch)
    with pytest.raises(Interrupted):
        copy_examples(tmp_path)
    with pytest.raises(Interrupted):
        dataset.save(tmp_path / "data.npz")
    assert (tmp_path / "voyage.names").read_bytes() == OLD
    assert (tmp_path / "data.npz").read_bytes() == OLD
    assert _leftovers(tmp_path) == []
    monkeypatch.undo()
    dataset.save(tmp_path / "data.npz")
    np.testing.assert_array_equal(load_aixi(tmp_path / "data.npz").images, dataset.images)


def test_a_name_of_the_longest_length_is_written(tmp_path):
    path = tmp_path / ("n" * 255)
    with atomic_write(path, encoding="utf-8") as handle:
        handle.write("new\n")
    assert path.read_text() == "new\n" and _leftovers(tmp_path) == []
