"""The web dashboard (being written)."""


def register(app) -> None:
    """Mount the dashboard at / on `app`."""
