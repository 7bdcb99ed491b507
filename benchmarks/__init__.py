"""Speed harnesses (``python -m benchmarks.bench_ingest``); figures go to RESULTS.md."""
