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

#: The clock leeway docs/conformance.md's snippets give (pyjwt's `leeway`, jose's `clockTolerance`): THREATS'
#: "a few seconds".
DOCUMENTED_LEEWAY_SECONDS = 5

#: Lifetimes (`exp - iat`) longer than the spec's thirty seconds, each of which must be refused: just past the
#: thirty seconds plus the documented leeway (by that leeway again, so a backend allowing up to twice it still
#: passes), four lifetimes, and a year (pyjwt's defaults take it, THREATS).
LONG_LIFETIMES_SECONDS = (ASSERTION_LIFETIME_SECONDS + 2 * DOCUMENTED_LEEWAY_SECONDS,
                          4 * ASSERTION_LIFETIME_SECONDS, 365 * 24 * 3600)

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

#: endpoint/jwks-refetch-bounded: how many forged calls with unknown random `kid`s it sends at once, and how many
#: fetches of the key set they may cost: one when the endpoint's refetch cooldown has run out, and one more should
#: it run out again during the burst. A client with no cooldown fetches once per call.
JWKS_BURST_CALLS = 24
JWKS_BURST_MAX_FETCHES = 2

#: How many correct calls, signed by a key the endpoint already has, endpoint/jwks-refetch-bounded makes: they must
#: cost no fetch of the key set (it is served with max-age=300, and cached for a lifetime).
CACHED_CALLS = 5

#: endpoint/keys-kept-when-issuer-fails: how long, while the kit's issuer answers 503, it keeps sending calls with
#: unknown `kid`s (this far apart) until the endpoint tries to refetch, so a client that drops its keys when a fetch
#: fails shows it. An endpoint whose cooldown outlasts this never tries, and is checked on its cached keys alone.
OUTAGE_PROBE_SECONDS = 1.0
OUTAGE_PROBE_PAUSE_SECONDS = 0.05

#: How many correct calls endpoint/keys-kept-when-issuer-fails makes while the issuer fails: each must be accepted.
OUTAGE_CALLS = 3
