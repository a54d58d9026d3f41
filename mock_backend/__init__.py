"""The mock backend: an integrator's reference for verifying Toolgate's call assertions, a demo
shop to call, and misbehaviour on demand for testing the platform.

It stands alone (flask, gevent, pyjwt, cryptography, requests, and the serve loop `serving` and command runner
`commandline` it shares) and imports nothing from `service`.
Run it with `toolgate mock-backend --issuer ISS` (or `python -m mock_backend --issuer ISS`, the same command
without the service), or build the app with `create_app`.
"""


def __getattr__(name: str):
    # Imported lazily: `python -m mock_backend` imports this package before __main__ patches
    # gevent, so nothing here may import socket, ssl or threading at import time.
    if name == "create_app":
        from mock_backend.app import create_app

        return create_app
    raise AttributeError(f"module 'mock_backend' has no attribute {name!r}")


__all__ = ["create_app"]
