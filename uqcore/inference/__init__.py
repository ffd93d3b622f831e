"""What runs on a built model: the batched T-sample sampler, the deterministic prefix
computed once, prediction over many texts, salience, and what an uncertainty flags."""
