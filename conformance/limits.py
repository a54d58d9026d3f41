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

#: How far past `exp` the kit's "just expired" assertion is. THREATS: "keep leeway to a few
#: seconds"; an endpoint that still takes an assertion this late allows ten seconds or more.
EXPIRED_BY_SECONDS = 12

#: Lifetimes (`exp - iat`) longer than the spec's thirty seconds, each of which must be refused:
#: pyjwt's defaults take a year (THREATS), and four lifetimes is more than any sane leeway adds.
LONG_LIFETIMES_SECONDS = (365 * 24 * 3600, 4 * ASSERTION_LIFETIME_SECONDS)

# The kit's own budgets, not the spec's.

#: How long `endpoint/key-rotation-picked-up` keeps retrying a call signed with the next key. A
#: well-behaved JWKS client refetches an unknown `kid` at most once per cooldown, and the run's
#: first call has just filled its cache: jose's createRemoteJWKSet and pyjwt's PyJWKClient (2.15+)
#: both wait 30 s after a fetch (the mock backend 10 s), so 35 s lets their defaults pass.
#: `--rotation-wait` changes it; the case stops at the first accepted call.
ROTATION_WAIT_SECONDS = 35.0

#: The most `--rotation-wait` may ask for: the case must still end within its budget.
ROTATION_WAIT_MAX_SECONDS = 120.0

#: The rotation case's first pause between calls with the next key. Each pause doubles, up to
#: ROTATION_RETRY_SECONDS, so an endpoint that refetches at once is seen taking the key within a
#: few tenths of a second, and one whose cooldown runs on gets about a call a second.
ROTATION_RETRY_FIRST_SECONDS = 0.05

#: The longest pause between the rotation case's calls; its last call starts once the wait is over.
ROTATION_RETRY_SECONDS = 1.0

#: How long one case may run before it is reported as errored. A case makes at most a handful
#: of calls, each bounded by the call deadline; this only catches a check that hangs.
CASE_BUDGET_SECONDS = 6 * CALL_DEADLINE_SECONDS

#: Cases run at once by default (independent cases only; see `Case.exclusive`).
DEFAULT_JOBS = 16

#: How much of a response body a failure report quotes.
EXCERPT_CHARS = 120
