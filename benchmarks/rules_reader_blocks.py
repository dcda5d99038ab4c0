"""Why the ``.data`` fast reader reads blocks itself instead of streaming with
``pyarrow.csv.open_csv`` (keep a hand-written reader only where a
benchmark shows it is measurably better).

Each case runs in a fresh process on the table of ``tests/rules/reader_table.py``
(48 MB by default) and reports the peak resident memory added while reading the file with
the schema of :mod:`xplique_ext.rules.datafile` and discarding every batch (so the figure is
the reader's own overhead, not the table's), and the time:

- ``open_csv``: Arrow's streaming reader, on a native file (``pyarrow.OSFile``), threads on;
- ``open_csv-1``: the same, ``use_threads=False``;
- ``blocks-1MiB`` / ``blocks-2MiB``: ``pyarrow.csv.read_csv`` on blocks of whole lines, as
  ``xplique_ext.rules.datafile._fast_parts`` reads them.

Measured on the 2-core development machine (load about 12), 48 MB file: ``open_csv`` added
76 MB (1.59x the file; 73 MB without threads) for its read-ahead alone, 1 MiB blocks 7 MB
(0.16x), 2 MiB blocks 12 MB, at the same speed (1.3-2.0 s, noisy under that load). Over a
whole ``read_data`` (the table included) that was 2.6-3.9x the file with ``open_csv`` against
1.5-1.6x with 1 MiB blocks: above the 2x target, hence the blocks. Measured again in one run
(measured under a load of 7.8): ``open_csv`` 79 MB added (1.66x the file) in 1.11 s, ``open_csv-1`` 73 MB
(1.53x) in 1.15 s, 1 MiB blocks 7 MB (0.15x) in 1.24 s, 2 MiB blocks 12 MB (0.26x) in 1.18 s.
Run: ``python benchmarks/rules_reader_blocks.py``.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import textwrap

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

CHILD = textwrap.dedent(
    """
    import json, sys, time
    import pyarrow as pa, pyarrow.csv as pacsv
    from xplique_ext.rules import read_names
    from xplique_ext.rules import datafile

    def peak():
        with open("/proc/self/status") as status:
            for line in status:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) * 1024

    case, path, names = sys.argv[1], sys.argv[2], read_names(sys.argv[3])
    keys = [str(k) for k in range(len(names.columns))]
    types = {k: pa.float64() if a.is_numeric else pa.dictionary(pa.int32(), pa.string())
             for k, a in zip(keys, names.columns)}
    with open("/proc/self/clear_refs", "w") as handle:
        handle.write("5")
    with open("/proc/self/statm") as handle:
        rss = int(handle.read().split()[1]) * 4096
    began = time.perf_counter()
    rows = 0
    if case.startswith("open_csv"):
        reader = pacsv.open_csv(
            pa.OSFile(path),
            read_options=pacsv.ReadOptions(column_names=keys, use_threads=case == "open_csv"),
            convert_options=pacsv.ConvertOptions(column_types=types, null_values=["?"]),
            memory_pool=pa.system_memory_pool(),
        )
        for batch in reader:
            rows += batch.num_rows
    else:
        datafile._BLOCK_BYTES = int(case.split("-")[1][:-3]) << 20
        with open(path, "rb") as handle:
            while True:
                block = handle.read(datafile._BLOCK_BYTES)
                if not block:
                    break
                block += handle.readline()
                rows += datafile._read_block(block, names, numbers_as_text=False).num_rows
    print(json.dumps({"rows": rows, "added": peak() - rss, "seconds": time.perf_counter() - began}))
    """
)


def main() -> int:
    sys.path.insert(0, os.path.join(ROOT, "tests", "rules"))
    from reader_table import TABLE_NAMES, write_table

    folder = tempfile.mkdtemp(prefix="xplique_ext_reader_")
    data, names = os.path.join(folder, "t.data"), os.path.join(folder, "t.names")
    with open(names, "w") as handle:
        handle.write(TABLE_NAMES)
    write_table(data, 20_000, repeat=40)
    size = os.path.getsize(data)
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([ROOT, *sys.path]))
    print(f"file: {size / 1e6:.0f} MB; load average {os.getloadavg()[0]:.1f}")
    for case in ("open_csv", "open_csv-1", "blocks-1MiB", "blocks-2MiB"):
        out = subprocess.run(
            [sys.executable, "-c", CHILD, case, data, names],
            capture_output=True,
            text=True,
            env=env,
            check=True,
        )
        report = json.loads(out.stdout.strip().splitlines()[-1])
        print(
            f"{case:<12} {report['rows']:>9,} rows  {report['seconds']:5.2f} s  peak added "
            f"{report['added'] / 1e6:6.1f} MB = {report['added'] / size:.2f}x the file"
        )
    os.remove(data)
    os.remove(names)
    os.rmdir(folder)
    return 0


if __name__ == "__main__":
    sys.exit(main())
