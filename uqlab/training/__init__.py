"""Training: typed config, batching, resumable state and the loop of ``python -m uqlab.train``."""
