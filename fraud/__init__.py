"""rummyguard.fraud: replay facts -> features -> models -> rings -> flags, and the honest
evaluation of all of it (docs/fraud.md, DETECTION.md)."""
