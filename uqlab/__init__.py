"""uqlab: the lab around the :mod:`uqcore` library.

Tasks and their data, training, evaluation, the paper's tables, results, sweeps and benchmarks,
each a ``python -m uqlab.<tool>`` command. Imports flow one way: ``uqlab`` uses ``uqcore``;
``uqcore`` never imports ``uqlab``, and ``uqlab`` never imports the app (``app``, ``app_pages``,
``ui``, ``viz``, streamlit).
"""
