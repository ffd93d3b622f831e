"""uqcore: transformers whose attention is stochastic, and the statistics of their samples.

Model code imports torch only (never streamlit, plotly or altair).
"""

__version__ = "0.1.0"
