"""Plain logic of the app: no Streamlit here (tests/test_architecture.py checks it). The modules
one level up, in ``ui/``, are the ones that touch Streamlit."""
