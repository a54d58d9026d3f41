"""The spec's numbers as the mock backend checks them, each named once.

The mock stands alone, as an integrator's backend would, so it does not import `service.limits`;
these are the same numbers, and tests/test_limits_agree.py fails if either side changes alone.
"""

#: The platform mints assertions with `exp = iat + 30` ("thirty seconds after the call is minted").
ASSERTION_LIFETIME_SECONDS = 30

#: Clock skew tolerated between the platform and this backend. A few seconds, never minutes.
CLOCK_SKEW_SECONDS = 5
