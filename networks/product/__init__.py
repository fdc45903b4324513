"""The product form of the hard instance's support (THEORY §4.8)."""
