"""Tests of uqlab/training/ (one file per module)."""
