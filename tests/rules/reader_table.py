"""The table of the peak-memory test of ``read_data`` and of
``benchmarks/rules_reader_blocks.py``: 6 nominal and 6 numeric attributes, 1% unknown
values."""

import numpy as np

#: The ``.names`` text of the table.
TABLE_NAMES = "class.\n" + "".join(
    f"nom{k}: {', '.join(f'v{j}' for j in range(3 + k))}.\n" for k in range(6)
)
TABLE_NAMES += "".join(f"num{k}: real.\n" for k in range(6)) + "class: c0, c1, c2.\n"


def write_table(path, n, seed=0, repeat=1):
    """The benchmark's table: 6 nominal and 6 numeric attributes, 1% unknown values
    (``n`` random rows, written ``repeat`` times)."""
    rng = np.random.default_rng(seed)
    columns = []
    for k in range(6):
        values = np.array([f"v{j}" for j in range(3 + k)], dtype=object)[rng.integers(0, 3 + k, n)]
        values[rng.random(n) < 0.01] = "?"
        columns.append(values)
    for _ in range(6):
        values = np.char.mod("%.3f", rng.normal(0, 1, n)).astype(object)
        values[rng.random(n) < 0.01] = "?"
        columns.append(values)
    columns.append(np.array(["c0", "c1", "c2"], dtype=object)[rng.integers(0, 3, n)])
    lines = columns[0]
    for column in columns[1:]:
        lines = lines + "," + column
    text = ("\n".join(lines.tolist()) + "\n").encode()
    with open(path, "wb") as handle:
        for _ in range(repeat):
            handle.write(text)
