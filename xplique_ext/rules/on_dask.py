"""Rules on Dask: reading a ``.data`` file as a Dask DataFrame, counting the contingency
tables and predicting partition by partition.

Imported only when Dask is used (a Dask DataFrame passed to
:func:`~xplique_ext.rules.evaluate_rules` or :func:`~xplique_ext.rules.predict_rules`,
:func:`read_data_dask`, ``xplique-ext rules --dask``): ``import xplique_ext.rules`` works
without Dask installed.
"""

from __future__ import annotations

import numbers
import os
import socket
from typing import Any, Union

import numpy as np
import pandas as pd

from ..commons.params import PATH, STRING, InstanceOf, Interval, validate_params
from .compile import compile_rules
from .datafile import default_names_path
from .errors import DataParseError
from .names import Names, read_names
from .pbm import RuleSet
from .syntax import open_text

__all__ = ["import_dask", "read_data_dask", "dask_counts", "dask_predictions"]


def import_dask():
    """Import Dask (an optional dependency), or say which extra installs it."""
    try:
        import dask
        import dask.dataframe  # noqa: F401
    except ImportError as error:
        raise ImportError(
            "this needs Dask, an optional dependency: install it with "
            "pip install 'xplique_ext[distributed]'"
        ) from error
    return dask


@validate_params(
    {
        "path": [PATH],
        "names": [
            InstanceOf(Names, str, os.PathLike, description="a Names object or a path"),
            None,
        ],
        "blocksize": [Interval(numbers.Integral, 1, None), STRING],
    }
)  # bytes, or "64MB"
def read_data_dask(
    path: Union[str, os.PathLike],
    names: Union[Names, str, os.PathLike, None] = None,
    *,
    blocksize: Union[int, str] = "64MB",
) -> Any:
    """A ``.data`` file as a ``dask.dataframe.DataFrame``, read with
    ``dask.dataframe.read_csv`` against the ``.names`` schema.

    Nominal, boolean, date and time columns are categoricals, numbers are Arrow strings
    (``?`` and ``!`` are kept as text), so that
    :func:`~xplique_ext.rules.evaluate_rules` (with ``names``) encodes and checks each
    partition as :func:`read_data` does. Partitions are cut at new lines, so a quoted
    value may not span lines here.

    Parameters
    ----------
    path
        The data file (or a glob of files, as Dask accepts).
    names
        As for :func:`read_data`.
    blocksize
        Bytes per partition.

    Returns
    -------
    dask.dataframe.DataFrame
        Columns named after the attributes; pass ``names`` along to ``evaluate_rules``.
    """

    dask = import_dask()
    names = names if isinstance(names, Names) else read_names(names or default_names_path(path))
    if not any(c in os.fspath(path) for c in "*?["):  # a file, not a glob: missing, UTF-16
        open_text(path).close()  # or UTF-32 refused now, as read_data does
    dtype = {a.name: ("string" if a.is_numeric else "category") for a in names.columns}
    frame = dask.dataframe.read_csv(
        os.fspath(path),
        header=None,
        names=names.column_names,
        dtype=dtype,
        blocksize=blocksize,
        skipinitialspace=True,
        keep_default_na=False,
        na_filter=False,
        index_col=False,
    )
    return frame.map_partitions(_check_fields, names, os.fspath(path), meta=frame._meta)


def _check_fields(frame: pd.DataFrame, names: Names, file: str, partition_info=None):
    """A Dask partition read from a file: no empty value (a record that lacks fields
    reads as empty values too), and extra fields are refused by the reader itself."""
    number = partition_info["number"] if partition_info else "?"
    for name in frame.columns:
        series = frame[name]
        if isinstance(series.dtype, pd.CategoricalDtype):  # code -1 (NaN): empty too
            empty = series.cat.categories.astype(str).str.strip().to_numpy() == ""
            empty = np.append(empty, True)[series.cat.codes.to_numpy()]
        else:
            empty = series.fillna("").str.strip().eq("").to_numpy(dtype=bool)
        if empty.any():
            row = int(np.flatnonzero(empty)[0])
            raise DataParseError(
                f"empty value for attribute {name!r} (write ? for an unknown value, ! for a "
                f"not-applicable one), or fewer than {len(names.columns)} values (row "
                f"{row + 1} of partition {number})",
                file=file,
                text=",".join(str(v) for v in frame.iloc[row] if not pd.isna(v)),
            )
    return frame


def _counted(task, rules: RuleSet, frame: pd.DataFrame, mode: str, names: Names, number):
    """One Dask task: ``task`` counts a partition; its errors name the partition."""
    try:
        return task(rules, frame, mode, names)
    except DataParseError as error:
        raise DataParseError(
            error.message.replace("of the DataFrame)", f"of partition {number})"),
            file="<Dask DataFrame>",
            line=error.line,
            text=error.text,
        ) from None


def dask_counts(rules: RuleSet, frame: Any, mode: str, names: Names, task):
    """The counts of every partition, ``task(rules, partition, mode, names)``, computed in
    parallel by Dask's current scheduler (a ``distributed`` client when one is active)."""
    dask = import_dask()
    compile_rules(rules, names)  # a rule that does not fit fails here, at once
    tasks = [
        dask.delayed(_counted)(task, rules, part, mode, names, number)
        for number, part in enumerate(frame.to_delayed())
    ]
    return list(dask.compute(*tasks)), names, None


def dask_predictions(task, frame: Any, rules: RuleSet, names: Names, *args):
    """A lazy Dask series of the predictions, ``task(partition, rules, names, *args)``
    partition by partition (its type: ``task`` on the empty partition Dask describes)."""
    import_dask()
    meta = task(frame._meta, rules, names, *args)
    return frame.map_partitions(task, rules, names, *args, meta=meta)


class SchedulerError(ValueError):
    """No Dask scheduler answers at an address (malformed, closed, or another server)."""


def check_scheduler(address: str, seconds: float) -> None:
    """Check within ``seconds`` that a Dask scheduler answers at ``address``.

    ``distributed.Client`` alone waits for minutes on a port that accepts connections but
    is no scheduler (a dashboard's 8787), retries a closed port for 30 s and raises a
    bare ``ValueError`` on a malformed address: this asks the scheduler for its identity
    with a deadline on every step, so that each case is one clear error.

    Raises
    ------
    SchedulerError
        Naming the address and what went wrong.
    """
    import asyncio

    import_dask()
    from distributed.comm import connect
    from distributed.comm.addressing import parse_address, parse_host_port
    from distributed.comm.registry import get_backend

    try:
        scheme, location = parse_address(address, strict=True)
        get_backend(scheme)  # an unknown scheme
        host_port = parse_host_port(location) if scheme in ("tcp", "tls", "ws", "wss") else None
    except (ValueError, TypeError) as error:
        raise SchedulerError(
            f"invalid Dask scheduler address {address!r} (expected tcp://HOST:PORT): {error}"
        ) from None
    if host_port is not None:  # a closed port: refused at once (distributed retries 30 s)
        try:
            socket.create_connection(host_port, timeout=seconds).close()
        except OSError as error:
            reason = error.strerror or str(error) or type(error).__name__
            raise SchedulerError(f"cannot reach a Dask scheduler at {address}: {reason}") from None

    async def identity():
        comm = await asyncio.wait_for(connect(address, timeout=seconds), seconds)
        try:
            await asyncio.wait_for(comm.write({"op": "identity", "reply": True}), seconds)
            return await asyncio.wait_for(comm.read(), seconds)
        finally:
            comm.abort()

    try:
        reply = asyncio.run(identity())
    except asyncio.TimeoutError:
        raise SchedulerError(
            f"no Dask scheduler answered at {address} within {seconds:g} s (a "
            "server listens there, but is it a scheduler's address, e.g. "
            "tcp://host:8786, and not its dashboard's?)"
        ) from None
    except (OSError, ValueError, TypeError) as error:
        reason = str(error).strip() or type(error).__name__
        raise SchedulerError(f"cannot reach a Dask scheduler at {address}: {reason}") from None
    if not isinstance(reply, dict) or reply.get("type") != "Scheduler":
        kind = reply.get("type") if isinstance(reply, dict) else type(reply).__name__
        raise SchedulerError(f"the server at {address} is not a Dask scheduler (a {kind})")
