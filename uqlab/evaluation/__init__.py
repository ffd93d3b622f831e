"""Evaluation and reports: stored samples, files held until a command succeeds, examples
split across processes, the paper's tables, error-detection rows, benchmark reports."""
