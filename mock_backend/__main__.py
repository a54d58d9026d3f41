import sys

from mock_backend.entry import mock_backend  # patches gevent before anything imports socket, ssl or threading

sys.exit(mock_backend())
