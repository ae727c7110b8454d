"""Monte Carlo bidding search and the sampler that draws deals consistent with an auction."""
