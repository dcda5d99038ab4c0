"""The cores this process may use, for the standard library's thread pools (the EMD of
ground-truth maps, the ``.data`` reader's blocks, the rule counts' row parts)."""

import os


def usable_cores() -> int:
    """The CPU cores this process may run on (its affinity, where the system tells it:
    a container limited to 2 of 64 cores gets 2), at least 1.

    Examples
    --------
    >>> usable_cores() >= 1
    True
    """
    if hasattr(os, "sched_getaffinity"):
        return max(1, len(os.sched_getaffinity(0)))
    return os.cpu_count() or 1
