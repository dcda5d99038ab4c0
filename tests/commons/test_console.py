"""xplique_ext.commons.console: TensorFlow's noise kept off the console, Python's kept."""

import os
import subprocess
import sys
from pathlib import Path

from xplique_ext.commons.console import quiet_console

ROOT = Path(__file__).resolve().parents[2]

SCRIPT = """
import logging, os, sys, warnings
from xplique_ext.commons.console import quiet_tensorflow
quiet_tensorflow()
quiet_tensorflow()  # twice: harmless
os.write(2, b"native log line\\n")
logging.getLogger("tensorflow").warning("retracing note")
warnings.warn("IProgress not found. Please update jupyter and ipywidgets.")
warnings.warn("a user warning")
print("python message", file=sys.stderr)
print(os.environ["TF_CPP_MIN_LOG_LEVEL"])
"""


def test_quiet_tensorflow_keeps_python_stderr_and_drops_native_lines():
    env = {k: v for k, v in os.environ.items() if not k.startswith("TF_CPP")}
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), env.get("PYTHONPATH", "")])
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT], capture_output=True, text=True, env=env, timeout=120
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "3"
    assert "native log line" not in done.stderr and "retracing" not in done.stderr
    assert "IProgress" not in done.stderr
    assert "a user warning" in done.stderr and "python message" in done.stderr


def test_quiet_tensorflow_native_false_leaves_the_descriptor(capfd):
    from xplique_ext.commons.console import quiet_tensorflow

    quiet_tensorflow(native=False)
    os.write(2, b"still visible\n")
    assert "still visible" in capfd.readouterr().err


def test_quiet_console_silences_native_stderr_only(capfd):
    import logging

    with quiet_console():
        os.write(2, b"native log line\n")
        print("python message", file=sys.stderr)
        logging.getLogger("tensorflow").warning("retracing note")
        logging.getLogger("tensorflow").error("a real error")
    os.write(2, b"after\n")
    err = capfd.readouterr().err
    assert "native log line" not in err and "retracing note" not in err
    assert "python message" in err and "after" in err
    with quiet_console(verbose=True):
        os.write(2, b"verbose native\n")
    assert "verbose native" in capfd.readouterr().err


def test_quiet_tensorflow_holds_when_tensorflow_resets_its_logger_level():
    import logging

    from xplique_ext.commons import console

    logger = logging.getLogger("tensorflow")
    level = logger.level
    records = []

    class Keep(logging.Handler):
        def emit(self, record):
            records.append(record.levelno)

    handler = Keep()
    logger.addHandler(handler)
    try:
        console.quiet_tensorflow(native=False)
        console.quiet_tensorflow(native=False)  # the filter is added once
        assert logger.filters.count(console._ERRORS_ONLY) == 1
        logger.setLevel(logging.INFO)  # what tf.get_logger() does in a notebook
        logger.warning("retracing")
        logger.error("a real error")
        assert records == [logging.ERROR]
    finally:
        logger.removeHandler(handler)
        logger.removeFilter(console._ERRORS_ONLY)
        logging.getLogger("absl").removeFilter(console._ERRORS_ONLY)
        logger.setLevel(level)
