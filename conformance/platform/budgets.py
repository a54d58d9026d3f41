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

#: How long each call of a gathering (the mock's `together/<group>/<count>`, which answers once every call of the
#: group is at the endpoint at once) waits for the rest, as a share of the call deadline. A platform running the
#: calls in parallel never waits it: they meet within milliseconds (18 ms at most, the kit's own tests found, on
#: two cores kept busy by three other processes; a tenth of the 2 s deadline the kit's own tests give is 200 ms).
#: One running them one after another gets each call's `met: false` back well within the deadline, so the case
#: reports what the endpoint saw, not timeouts, and a broken platform costs its run a fraction of a second per call.
GATHERING_WAIT_SHARE = 0.1

#: How long the first call of `parallel/results-in-order` takes at the mock, so that it comes back after the
#: echoes beside it (milliseconds each) and results listed as they complete would put it last. It only has to
#: finish last, not be long: the overlap itself is observed by the gathering cases. Shorter than a short test deadline
#: less `IN_TIME_MARGIN_SECONDS` (half a second, at the kit's own tests' 2 s), so that a double holding calls that
#: long, to break `failure/answered-in-time`, does not hold this one.
SLOW_FIRST_CALL_SECONDS = 0.25

#: Clock difference tolerated between the kit and the platform when checking `iat`.
CLOCK_TOLERANCE_SECONDS = 10

#: After a key rotation, an endpoint that cached the key set may refuse the new `kid` until its
#: refetch cooldown passes (the mock's is ten seconds); the rotation case retries this long.
KEY_PICKUP_SECONDS = 15.0

#: The rotation case retries soon at first (an endpoint may take the new key moments later), then twice as late
#: each time, at most `KEY_PICKUP_RETRY_SECONDS` apart: a few calls more than one a second, and no whole second
#: lost when the wait is short.
KEY_PICKUP_FIRST_RETRY_SECONDS = 0.1
KEY_PICKUP_RETRY_SECONDS = 1.0

#: How long a platform and mock started by the kit may take to answer. Only a start that fails waits it whole; on a
#: machine busy with other work (a CI runner, the suite's two parts beside a niced platform) 30 s ran out twice here.
START_SECONDS = 60.0

#: The life of the session token `approval/expired-refused` holds its call with: an approval never outlives the
#: token that made it, so the case sees one expire within a second, whatever the platform's approval lifetime.
EXPIRING_TOKEN_SECONDS = 1

#: How often that case asks whether the platform has seen the approval expire.
EXPIRY_POLL_SECONDS = 0.05
