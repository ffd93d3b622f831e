"""Streamlit-side helpers of the app: state, sidebar, caches, page views (no model code)."""
