"""Benchmarks of the library: the batched sampler and the shared prefix."""
