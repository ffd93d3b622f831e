"""AppTest of the Results page on tiny checkpoints."""

from __future__ import annotations

import pytest

from tests.app_fixtures import app_checkpoints, ckdir  # noqa: F401 (fixtures)
from tests.helpers import chart_titles, on_page, open_link
from ui.logic import keys as K
from uqlab.workbench import dataset

pytestmark = pytest.mark.usefixtures("app_checkpoints")


titles = chart_titles


def test_results_page_shows_tables_reliability_and_roc():
    at = on_page("app_pages/results.py")
    assert at.dataframe  # the Table 2 rows of the checkpoints
    at.number_input(key="res_n").set_value(20)
    at.multiselect(key="res_ckpts").set_value(["cola-hsto", "cola-trans"])
    at.button(key="res_go").click().run()
    assert not at.exception, at.exception
    t = titles(at)
    assert any(x.startswith("Reliability diagram") for x in t)
    assert any(x.startswith("Out-of-domain detection by") for x in t)
    assert any(x.startswith("Risk-coverage") for x in t)
    at.selectbox(key="res_score").set_value("energy").run()  # a logit score picks up too
    assert not at.exception and any("energy" in x for x in titles(at))
    assert sum(x.endswith("by domain") for x in t) == 2
    assert "Two checkpoints, paired" in [s.value for s in at.subheader]  # bundled rows too
    at.button(key=K.RES_PAIR_GO).click().run()
    assert any(
        i.value.startswith("The paired verdict needs at least 40 labelled rows")
        and i.value.endswith("20 here. Raise Examples per domain.")
        for i in at.info
    )  # 20 in-domain examples: too few for a verdict, and the control that gives more
    labels = [b.proto.label for b in at.get("download_button")]
    assert labels == [
        "Download this table (CSV)",
        "Download the per-example values (CSV)",
        "Download the report (HTML)",
    ]
    assert any(t.endswith("confusion matrix (in-domain)") for t in chart_titles(at))


def test_results_keeps_a_checkpoint_choice_when_the_task_changes(tmp_path, monkeypatch):
    """Defect: the checkpoint list emptied when the task changed ("Pick checkpoints")."""
    from tests.app_fixtures import make_checkpoints
    from uqlab.catalog.tasks import TASKS

    other = next(t for t in TASKS if t != "cola")
    root = make_checkpoints(tmp_path, families=("trans", "hsto"))
    make_checkpoints(root, prefix=other, task=other, families=("trans", "hsto"))
    monkeypatch.setenv("UQ_CHECKPOINT_DIR", str(root))
    at = on_page("app_pages/results.py")
    assert at.multiselect(key="res_ckpts").value
    at.radio[0].set_value(other).run()
    assert not at.exception
    chosen = at.multiselect(key="res_ckpts").value
    assert chosen and all(n.startswith(f"{other}-") for n in chosen)
    at.radio[0].set_value("cola").run()
    chosen = at.multiselect(key="res_ckpts").value
    assert chosen and all(n.startswith("cola-") for n in chosen)


def test_results_preselects_the_sidebars_checkpoint_and_follows_it():
    """Defect: Results ignored the sidebar's checkpoint (it preselected two paper families)."""
    at = open_link("app_pages/results.py", ckpt="cola-probtrans")
    assert at.multiselect(key="res_ckpts").value[0] == "cola-probtrans"
    at.sidebar.selectbox[0].set_value("cola-bam").run()
    at.switch_page("app_pages/results.py").run()
    assert not at.exception, at.exception
    assert at.multiselect(key="res_ckpts").value[0] == "cola-bam"
    at.multiselect(key="res_ckpts").set_value(["cola-trans"]).run()  # a hand-made choice stays
    assert at.multiselect(key="res_ckpts").value == ["cola-trans"]


def test_on_your_file_the_reliability_diagram_says_your_file_not_in_domain():
    """Issue 45: a reliability diagram drawn on a visitor's file said "(in-domain)"; the file is
    not the task's in-domain set. Its title and the risk-coverage one say "your file"."""
    from tests.app.test_data_source import _kept_file, _map_yes_no
    from ui.logic import keys as K

    at = open_link("app_pages/results.py", ckpt="cola-hsto")
    at.radio(key=K.DATA_KIND).set_value("mine").run()
    _map_yes_no(_kept_file(at).run())
    at.button(key=K.RES_GO).click().run()
    assert not at.exception, at.exception
    t = titles(at)
    assert any(x.startswith("Reliability diagram (your file, 15 bins") for x in t), t
    assert any(x.startswith("Risk-coverage (your file)") for x in t), t
    assert not [x for x in t if "in-domain" in x and "Reliability" in x], t


def test_the_notes_stand_beside_the_figures_on_the_results_page(data_dir, tmp_path, monkeypatch):
    """Issue 45: Results showed a Mahalanobis AUROC below 0.5, OOD AUROCs at equal length that
    no bin could give, and temperature-scaled curves of a scaling that raised ECE without a
    word; each is said where its figure is."""
    from tests.helpers import TINY
    from tests.uqlab.test_results import noted_copy
    from ui.logic import keys as K
    from uqlab.train import main as train_main

    monkeypatch.setenv("UQ_DATA_DIR", str(data_dir))
    trained = tmp_path / "trained" / "cola-hsto"
    assert train_main(["--task", "cola", "--family", "hsto", "--out", str(trained), *TINY]) == 0
    noted_copy(trained, data_dir, tmp_path / "root")
    monkeypatch.setenv("UQ_CHECKPOINT_DIR", str(tmp_path / "root"))
    at = open_link("app_pages/results.py", ckpt="cola-hsto")
    assert not at.exception, at.exception
    warned = [w.value for w in at.warning]
    assert any(w.startswith("cola-hsto on the out-of-domain texts:") for w in warned), warned
    assert any("Mahalanobis 0.287" in w for w in warned), warned
    infos = [i.value for i in at.info]
    assert any(i.startswith("cola-hsto: Length could not be controlled") for i in infos), infos
    at.number_input(key=K.RES_N).set_value(20)
    at.button(key=K.RES_GO).click().run()
    assert not at.exception, at.exception
    warned = [w.value for w in at.warning]
    assert any("in-domain test ECE 0.085 → 0.106" in w for w in warned), warned
    switch = at.toggle(key=K.SCALED).proto.help  # the sidebar's scaling switch says it too
    assert "calibrated probabilities" in switch and "ECE 0.085 → 0.106" in switch, switch


def shown(widget) -> object:
    """What the browser draws for ``widget``: the value the server sent with the element
    (``set_value``) or else the element's default. AppTest's ``.value`` is the server's state,
    which can hold a choice the browser no longer shows (issue 45 item 13)."""
    p = widget.proto
    if p.DESCRIPTOR.name == "MultiSelect":
        return list(p.raw_values) if p.set_value else [p.options[i] for i in p.default]
    if p.DESCRIPTOR.name == "Selectbox":  # the option's label
        return p.raw_value if p.set_value else p.options[p.default]
    return p.value if p.set_value else p.default


def test_results_shows_the_checkpoints_and_settings_picked_after_the_source_switches_back():
    """Issue 45 item 13: switching "Examples" to "your labelled file" (no file yet: the page
    stops before the Checkpoints box) and back left the box empty in the browser, and T back at
    10, though the server still held the choice: the element came back without its value."""
    at = open_link("app_pages/results.py", ckpt="cola-hsto")
    at.multiselect(key=K.RES_CKPTS).set_value(["cola-trans", "cola-hsto"])
    at.number_input(key=K.RES_T).set_value(7)
    at.selectbox(key=K.RES_SCORE).set_value("energy").run()
    picked = (["cola-trans", "cola-hsto"], 7, "energy")
    for kind in ("mine", "bundled", "mine", "bundled"):
        at.radio(key=K.DATA_KIND).set_value(kind).run()
        assert not at.exception, at.exception
    widgets = (
        at.multiselect(key=K.RES_CKPTS),
        at.number_input(key=K.RES_T),
        at.selectbox(key=K.RES_SCORE),
    )
    assert tuple(w.value for w in widgets) == picked  # the server's state
    browser = (*picked[:2], dataset.SCORES["energy"][1])
    assert tuple(shown(w) for w in widgets) == browser  # what the browser draws


def test_every_family_stands_beside_the_plain_transformer_with_a_verdict(
    data_dir, tmp_path, monkeypatch
):
    """Issue 47: "which uncertainty is worth having" is answered per task on the page: each
    checkpoint's intervals and its uncertainty against the plain transformer's 1 - max p on
    the same texts, and a sentence that names the families that beat it (or says none)."""
    from tests.helpers import tiny_siblings

    root = tmp_path / "root"
    tiny_siblings(root, data_dir, evaluate=True)
    monkeypatch.setenv("UQ_CHECKPOINT_DIR", str(root))
    at = open_link("app_pages/results.py", ckpt="cola-hsto")
    assert not at.exception, at.exception
    assert "Which uncertainty is worth having" in [s.value for s in at.subheader]
    frames = [f.value for f in at.dataframe if "errors: beats plain 1−p?" in f.value.columns]
    (frame,) = frames
    assert sorted(frame["checkpoint"]) == ["cola-hsto", "cola-trans"]
    assert frame.set_index("checkpoint").loc["cola-trans", "errors: beats plain 1−p?"] == (
        "the baseline"
    )
    verdicts = [i.value for i in at.info if i.value.startswith("Beats cola-trans's 1 − max p")]
    assert verdicts and "for its errors: " in verdicts[0]
    labels = [b.proto.label for b in at.get("download_button")]
    assert "Download this comparison (CSV)" in labels


def _rows_csv(n: int) -> str:
    """A labelled file of ``n`` rows built from the tiny vocabulary's sentences."""
    from tests.app.test_data_source import SENTENCES

    lines = [
        f"{SENTENCES[i % len(SENTENCES)]} {SENTENCES[(3 * i + 1) % len(SENTENCES)]},"
        f"{'yes' if i % 3 else 'no'}"
        for i in range(n)
    ]
    return "sentence,judgement\n" + "\n".join(lines)


def _computed_on_a_file():
    """Results on a 60-row labelled file with cola-hsto chosen, computed."""
    from tests.app.test_data_source import _kept_file, _map_yes_no

    at = open_link("app_pages/results.py", ckpt="cola-hsto")
    at.radio(key=K.DATA_KIND).set_value("mine").run()
    _map_yes_no(_kept_file(at, text=_rows_csv(60)).run())
    at.multiselect(key=K.RES_CKPTS).set_value(["cola-hsto"]).run()
    at.button(key=K.RES_GO).click().run()
    assert not at.exception, at.exception
    return at


def test_on_your_file_each_family_stands_beside_the_plain_transformer_sampled_on_it():
    """Issue 47 item 3, "run it also on a visitor's labelled file": the plain transformer of
    the chosen checkpoint's task and backbone is sampled on the same file though not chosen,
    and the comparison table, its sentence and its CSV come with the file's report."""
    at = _computed_on_a_file()
    assert "Which uncertainty is worth having, on your file" in [s.value for s in at.subheader]
    (frame,) = [f.value for f in at.dataframe if "errors: beats plain 1−p?" in f.value.columns]
    cells = frame.set_index("checkpoint")["errors: beats plain 1−p?"]
    assert cells["cola-trans"] == "the baseline"  # sampled though not chosen
    assert cells["cola-hsto"].endswith(("better", "tie", "worse")), cells["cola-hsto"]
    assert not [c for c in frame.columns if c.startswith("OOD")]  # no out-of-domain file
    said = " ".join(c.value for c in at.caption)
    assert "Sampled on your file as the baseline: cola-trans." in said
    assert "30 labelled rows of your file scored (of 60" in said  # no recorded choice: halves
    assert any(i.value.startswith("Beats cola-trans's 1 − max p") for i in at.info)
    labels = [b.proto.label for b in at.get("download_button")]
    assert "Download this comparison (CSV)" in labels
    charts = titles(at)  # the file's figures show the chosen checkpoint only
    assert not [t for t in charts if "cola-trans" in t], charts


def test_on_a_small_file_the_comparison_says_how_many_rows_it_needs():
    from tests.app.test_data_source import _kept_file, _map_yes_no

    at = open_link("app_pages/results.py", ckpt="cola-hsto")
    at.radio(key=K.DATA_KIND).set_value("mine").run()
    _map_yes_no(_kept_file(at).run())  # 8 rows
    at.button(key=K.RES_GO).click().run()
    assert not at.exception, at.exception
    assert any("needs at least 40 labelled rows" in i.value for i in at.info)


def test_on_your_file_two_checkpoints_are_compared_paired_with_a_verdict():
    """Issue 49 item 4: A (the plain baseline first) against B on the same rows, one row per
    metric with B − A and its paired interval, a sentence, a CSV; A = B is refused kindly."""
    at = _computed_on_a_file()
    assert "Two checkpoints, paired on your file" in [s.value for s in at.subheader]
    assert not [f for f in at.dataframe if "B − A [95 %]" in f.value.columns]  # not yet asked
    at.button(key=K.RES_PAIR_GO).click().run()
    assert (at.selectbox(key=K.RES_PAIR_A).value, at.selectbox(key=K.RES_PAIR_B).value) == (
        "cola-trans",
        "cola-hsto",
    )
    (table,) = [f.value for f in at.dataframe if "B − A [95 %]" in f.value.columns]
    assert list(table["metric"]) == ["accuracy", "ECE", "NLL", "Brier", "AUROC for errors (1−p)"]
    assert {"A: cola-trans", "B: cola-hsto"} <= set(table.columns)
    for cell, better in zip(table["B − A [95 %]"], table["better"], strict=True):
        assert cell == "—" or cell.count("[") == 1, cell
        assert better in ("no difference", "cola-trans", "cola-hsto", "—")
    (said,) = [i.value for i in at.info if "paired bootstrap intervals over 60 rows" in i.value]
    assert "B − A = cola-hsto − cola-trans" in said
    assert "Download the paired verdict (CSV)" in [b.proto.label for b in at.get("download_button")]
    at.selectbox(key=K.RES_PAIR_SCORE).set_value("entropy").run()
    (table,) = [f.value for f in at.dataframe if "B − A [95 %]" in f.value.columns]
    assert table["metric"].iloc[-1] == "AUROC for errors (entropy)"
    at.selectbox(key=K.RES_PAIR_B).set_value("cola-trans").run()
    assert not at.exception, at.exception
    assert any(i.value == "Pick two different checkpoints as A and B." for i in at.info)
