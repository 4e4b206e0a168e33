"""CLI commands (placeholder module: commands are added by ``register``)."""


def register(app, reproduce):
    """Add this module's commands to the ``kpm`` app and its ``reproduce`` group."""
