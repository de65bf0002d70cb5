"""Fixed-input drift tracking: discover border inputs, keep a reference, sample daily."""
