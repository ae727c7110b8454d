"""Double-dummy results for training and search: NN-DDA (model, training, the batched
`DDEstimator`, seat and suit symmetries), exact DDS behind a cache, and the oracle deal sets."""
