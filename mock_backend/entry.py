"""The mock's process entry points: gevent patched first, then the command run (`toolgate-model-server` is
`model_server`; `python -m mock_backend` is `mock_backend`). Importing this module patches the process: only an
entry point may import it."""
from gevent import monkey

monkey.patch_all()  # first, before anything imports socket, ssl or threading


def mock_backend() -> int:
    """`python -m mock_backend`: the mock backend until stopped."""
    from mock_backend.cli import main

    return main()


def model_server() -> int:
    """`toolgate-model-server`: the scripted model until stopped, without the service installed."""
    from mock_backend.model_server import main

    return main()
