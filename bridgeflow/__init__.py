"""Contract bridge bidding: data pipeline and model training."""
