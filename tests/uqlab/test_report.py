"""python -m uqlab.report: one HTML file from a labelled file; bad input is one line and leaves
the output file as it was."""

from __future__ import annotations

import pandas as pd

from uqlab import report
from uqlab.workbench import dataset


def _file(tmp_path, n: int = 60):
    rows = dataset.examples("cola")[:n]
    path = tmp_path / "mine.tsv"
    pd.DataFrame({"sentence": [r[0] for r in rows], "gold": [r[1] for r in rows]}).to_csv(
        path, sep="\t", index=False
    )
    return path


def test_the_command_writes_one_report_of_two_checkpoints(tmp_path, capsys):
    out = tmp_path / "r.html"
    args = ["--ckpt", "cola-trans", "--ckpt", "cola-hsto", "--file", str(_file(tmp_path))]
    assert (
        report.main([*args, "--samples", "3", "--out", str(out), "--quiet", "--threads", "1"]) == 0
    )
    html = out.read_text(encoding="utf-8")
    assert "Two checkpoints, paired" in html and "B − A" in html and "mine.tsv" in html
    assert "wrote" in capsys.readouterr().out


def test_a_failed_run_leaves_the_output_untouched_and_says_why(tmp_path, capsys):
    out = tmp_path / "r.html"
    out.write_text("before", encoding="utf-8")
    path = _file(tmp_path)
    for bad in (
        ["--ckpt", "no-such-checkpoint", "--file", str(path)],
        ["--ckpt", "cola-trans", "--file", str(tmp_path / "missing.csv")],
        ["--ckpt", "cola-trans", "--ood-file", str(path)],
        ["--ckpt", "cola-trans", "--file", str(path), "--label", "nonsense"],
        ["--ckpt", "a", "--ckpt", "b", "--ckpt", "c"],
    ):
        assert report.main([*bad, "--out", str(out), "--quiet"]) == 1
        err = capsys.readouterr().err
        assert err.startswith("error: ") and "Traceback" not in err
        assert out.read_text(encoding="utf-8") == "before"
