"""Plotly figure builders for the app, usable from a notebook too (no streamlit here).

Kept outside :mod:`uqcore` so the model code never imports plotly.
"""
