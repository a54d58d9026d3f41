"""The broken modes: each switches off exactly one check of the reference verifier (`mock_backend.verify`).

They exist so the conformance kit can prove its negative cases fail against a backend that forgot that one
rule; never run them for real traffic. A module of their own so the command line lists them in `--help`
without importing the verifier (and with it pyjwt, cryptography and requests).
"""

BROKEN_MODES = (
    "skip-audience", "accept-expired", "any-issuer", "skip-signature",
    "accept-alg-none", "accept-hs256", "no-auth",
)
