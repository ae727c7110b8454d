"""Record model, format parsers, schema, encodings and the DuckDB catalog."""
