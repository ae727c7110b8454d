"""Duplicate matches: the agents that sit at the table and the evaluator that scores them in IMPs."""
