"""Apache Beam jobs: ingest, DD labelling."""
