"""The few values every test area shares: the repository, loopback, the test secret, an address nothing answers."""
from __future__ import annotations

import os
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
LOOPBACK = "127.0.0.1"
SECRET = "test-secret-key-for-sealing-private-keys"
#: Nothing listens here, and the address guard refuses loopback unless allowed: no test traffic leaves.
NOWHERE = "http://127.0.0.1:9"
SUBJECT_IN_PATH = {"name": "subject", "type": "string", "location": "path"}
#: A PostgreSQL server the storage, registry and load tests also run on, when set (CI sets it).
POSTGRES_URL = os.environ.get("TOOLGATE_TEST_POSTGRES_URL", "")
