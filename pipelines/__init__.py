"""The project's jobs: synth (the default corpus), ingest and DD labelling (Apache Beam).
Import `bridgeflow.dataset` and `bridgeflow.training`; nothing imports them."""
