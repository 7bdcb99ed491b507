"""The rules of each variant (one module each) over the shared meld logic."""
