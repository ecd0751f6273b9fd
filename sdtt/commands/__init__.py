"""One module per command group of the ``sdtt`` CLI; each has ``register(subparsers)``."""
