"""Findings (RULES.md §5): every breach names a rule ID, the event's ``seq`` and a sentence.

Rule IDs come from spec/RULES.md. The log-level integrity checks that RULES.md §5 lists
without naming get IDs of our own, prefixed ``LOG-`` so they cannot be mistaken for the
rulebook's:

- ``LOG-SEQ``    sequence gap, repeated or out-of-order ``seq``
- ``LOG-CHAIN``  hash chain broken (``prev_hash`` or ``hash`` does not match)
- ``LOG-EVENT``  an event the variant does not know, or that is not valid for the contract
                 (an ``event_id`` used twice in a game included)
- ``LOG-GAME``   the log does not start with ``GameCreated``, or mixes games
- ``LOG-RULES``  ``GameCreated.rules`` holds a key or value the variant does not know
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from mypy_extensions import mypyc_attr

Kind = Literal["violation", "discrepancy", "integrity"]
VIOLATION: Kind = "violation"
DISCREPANCY: Kind = "discrepancy"
INTEGRITY: Kind = "integrity"


@mypyc_attr(native_class=False)  # a plain class when compiled (setup.py): copies, pickles as is
@dataclass(frozen=True, slots=True)
class Finding:
    seq: int
    rule: str
    kind: Kind
    message: str

    def to_dict(self) -> dict:
        return {"seq": self.seq, "rule": self.rule, "kind": self.kind, "message": self.message}


class Halt(Exception):
    """Raised when the log and the state part ways (C-HOLD etc.): the replay stops."""

    def __init__(self, rule: str, message: str) -> None:
        super().__init__(f"{rule}: {message}")
        self.rule = rule
        self.message = message
