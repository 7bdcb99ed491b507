"""The event log: cards, event models and versions, upcasting, hashing, the store."""
