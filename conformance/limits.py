"""The spec's numbers, as the kit checks them, each named once.

The kit stands alone: it checks a platform or an integrator's endpoint from outside, over HTTP,
so it cannot import `service.limits`. These are the same numbers, taken from
spec/how-tools-run.txt; if the spec changes one, change it here and there.
"""

#: "Tools should respond within ten seconds": a call that has not answered by then is a timeout.
CALL_DEADLINE_SECONDS = 10.0

#: "Successful responses should stay below 16 KB (16,384 characters)." Exactly this many passes.
RESPONSE_CAP_CHARS = 16_384

#: "exp, the expiry: thirty seconds after the call is minted": `exp` is `iat` plus this.
ASSERTION_LIFETIME_SECONDS = 30

# The kit's own budgets, not the spec's.

#: How long one case may run before it is reported as errored. A case makes at most a handful
#: of calls, each bounded by the call deadline; this only catches a check that hangs.
CASE_BUDGET_SECONDS = 6 * CALL_DEADLINE_SECONDS

#: Cases run at once by default (independent cases only; see `Case.exclusive`).
DEFAULT_JOBS = 16

#: How much of a response body a failure report quotes.
EXCERPT_CHARS = 120
