"""Toy corpora with known answers, for tests and benchmarks only (never a pipeline input)."""
