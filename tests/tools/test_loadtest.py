"""The load test's plain helpers (tools.loadtest): /proc CPU, percentiles, visits from a run
log, links (no server, no browser). The launcher's: test_serve.py."""

from __future__ import annotations

import os
import subprocess
import sys

from tools import loadtest
from tools.loadtest import CLK_TCK, alive, cpu_seconds, parse_stat, percentile, tree_pids, visits


def test_parse_stat_reads_past_a_name_with_spaces_and_brackets():
    # pid (comm) state ppid pgrp session tty tpgid flags minflt cminflt majflt cmajflt utime
    # stime cutime cstime ...
    line = "42 (a (b) c) S 7 42 42 0 -1 4194560 1 2 3 4 100 50 20 30 20 0 1 0 5 6 7\n"
    ppid, cpu = parse_stat(line)
    assert ppid == 7
    assert cpu == (100 + 50 + 20 + 30) / CLK_TCK


def test_cpu_seconds_of_a_tree_include_a_finished_child():
    busy = "import time\nt = time.process_time()\nwhile time.process_time() - t < 0.3: pass\n"
    parent = subprocess.Popen(
        [
            sys.executable,
            "-c",
            f"import subprocess, sys, time; subprocess.run([sys.executable, "
            f"'-c', {busy!r}]); print('done', flush=True); time.sleep(60)",
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert parent.stdout.readline().strip() == "done"
        assert tree_pids(parent.pid) == [parent.pid]  # the child has finished
        assert cpu_seconds(parent.pid) >= 0.3 - 2 / CLK_TCK  # its CPU, waited for, counts
        assert alive(parent.pid) and alive(os.getpid())
    finally:
        parent.kill()
        parent.wait()
    assert not alive(parent.pid)


def test_percentile_by_nearest_rank():
    values = [float(v) for v in range(1, 101)]
    assert percentile(values, 0.5) in (50.0, 51.0)
    assert percentile(values, 0.95) == 95.0
    assert percentile([3.0], 0.95) == 3.0
    assert percentile([2.0, 1.0], 1.0) == 2.0


def test_a_visit_spans_its_sessions_runs_within_the_window():
    runs = [
        {"start": 5.0, "end": 6.0, "cpu_s": 0.1, "session": "warm"},  # before the window
        {"start": 10.0, "end": 10.5, "cpu_s": 0.2, "session": "a"},
        {"start": 10.6, "end": 12.0, "cpu_s": 0.3, "session": "a"},
        {"start": 11.0, "end": 11.25, "cpu_s": 0.05, "session": "b"},
        {"start": 30.0, "end": 31.0, "cpu_s": 0.1, "session": "b"},  # after the window
    ]
    seen = visits(runs, 9.0, 20.0)
    assert set(seen) == {"a", "b"}
    assert seen["a"] == {"seconds": 2.0, "cpu_s": 0.5, "runs": 2}
    assert seen["b"]["seconds"] == 0.25
    assert sorted(loadtest.visit_seconds(runs, 9.0, 20.0)) == [0.25, 2.0]


def test_links_same_or_different():
    same = loadtest.links_for("cola-hsto", 50, 4, same=True)
    assert len(same) == 4 and len(set(same)) == 1
    different = loadtest.links_for("cola-hsto", 50, 4, same=False)
    assert len(set(different)) == 4
    assert f"seed={loadtest.WARM_SEED}" not in "".join(same + different)
