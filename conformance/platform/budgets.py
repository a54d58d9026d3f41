"""The platform suite's own budgets: how long the kit waits, and the margins around the spec's numbers.

The spec's numbers themselves (the call deadline, the response cap, the assertion lifetime) live in
conformance/limits.py; everything here is derived from them or is the kit's own choice.
"""
from conformance.limits import CALL_DEADLINE_SECONDS

#: One request to the platform's API. A model step may wait out a call's whole deadline.
REQUEST_TIMEOUT_SECONDS = 3 * CALL_DEADLINE_SECONDS

#: A call that answers this long before the deadline must still succeed.
IN_TIME_MARGIN_SECONDS = 1.5

#: How long past the deadline the slow endpoint of `failure/timed-out` would take to answer.
LATE_BY_SECONDS = 4.0

#: A step holding a timed-out call must come back within the deadline plus this: the call is aborted.
ABORT_SLACK_SECONDS = 3.0

#: How long each of the calls that must overlap takes at the mock. Two of them in parallel must take less
#: than their sum; the platform's own work (tokens, signing, storing) comes out of the margin that leaves, so
#: a longer call leaves more: at 1 s, a loaded machine (load 10 on 2 cores) opened in 2.03 s now and then.
OVERLAP_CALL_SECONDS = 1.5

#: Clock difference tolerated between the kit and the platform when checking `iat`.
CLOCK_TOLERANCE_SECONDS = 10

#: After a key rotation, an endpoint that cached the key set may refuse the new `kid` until its
#: refetch cooldown passes (the mock's is ten seconds); the rotation case retries this long.
KEY_PICKUP_SECONDS = 15.0

#: How long a platform and mock started by the kit may take to answer.
START_SECONDS = 30.0
