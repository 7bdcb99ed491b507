"""Where tests find the shared spec's example and RULES.md: beside the checkout (../shared/spec, the
authority) when it is there, else the copy committed in tests/data/spec/, so the tests
also run on a clone without the shared folder."""

from __future__ import annotations

from pathlib import Path

SHARED_EXAMPLES = Path(__file__).parents[2] / "shared" / "spec" / "examples"
COPY = Path(__file__).parent / "data" / "spec"
EXAMPLES = SHARED_EXAMPLES if (SHARED_EXAMPLES / "classic-3p.jsonl").exists() else COPY
RULES = (SHARED_EXAMPLES.parent / "RULES.md" if (SHARED_EXAMPLES.parent / "RULES.md").exists()
         else COPY / "RULES.md")
