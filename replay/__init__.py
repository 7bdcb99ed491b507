"""The rules engine and the replayer."""
