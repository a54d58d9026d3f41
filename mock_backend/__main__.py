from gevent import monkey

monkey.patch_all()

import sys  # noqa: E402  (gevent must patch before anything imports socket, ssl or threading)

from mock_backend.cli import main  # noqa: E402

sys.exit(main())
