"""One module per area of the CLI; each exposes ``register(app)``."""
