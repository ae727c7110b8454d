"""Models, trainers, search and evaluation."""
