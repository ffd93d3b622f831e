"""The researcher's workbench: what the explorer and the dataset pages compute and draw, without
Streamlit, so a notebook, a report and the app show the same records and the same figures.

:mod:`~uqlab.workbench.compute` samples one text (the explorer's record) or many;
:mod:`~uqlab.workbench.dataset` turns a file's samples into a frame and its curves;
:mod:`~uqlab.workbench.figures` draws them with plotly; :mod:`~uqlab.workbench.notebook` is the
notebook's three calls (explore, analyze, compare) and :mod:`~uqlab.workbench.report` writes one
self-contained HTML report of a checkpoint on a file.
"""
