from gevent import monkey

monkey.patch_all()  # first: the kit's calls, its key server and its case pool all share one hub

import sys  # noqa: E402

from conformance.cli import main  # noqa: E402

sys.exit(main())
