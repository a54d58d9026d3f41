"""Fixed keys and a fixed clock for known-answer vectors, and a forger for hostile tokens.

ES256 is the key of RFC 7515 appendix A.3 and EdDSA the key of RFC 8037 appendix A.1, so the
vectors can be checked against those RFCs; the RS256 key was generated once for these tests.
"""
from __future__ import annotations

import base64
import json

from cryptography.hazmat.primitives.asymmetric import ec, ed25519
from cryptography.hazmat.primitives.serialization import load_pem_private_key

from service.keys import SigningKey, signing_key_from_private

#: The clock of every known-answer vector (2023-11-14T22:13:20Z).
FIXED_NOW = 1_700_000_000
ISSUER = "https://toolgate.example/orgs/acme"

RFC7515_A3_ES256_D = "jpsQnnGQmL-YBIffH1136cspYG6-0iY7X1fCE9-E9LI"
RFC8037_A1_ED25519_D = "nWGxne_9WmC6hEr0kuwsxERJxWl7MmkZcDusAxyuf2A"
RS256_PEM = b"""-----BEGIN PRIVATE KEY-----
MIIEvAIBADANBgkqhkiG9w0BAQEFAASCBKYwggSiAgEAAoIBAQDCgtAzc3FU2YOV
+l5qeivOwnJ3YYrsDZjpgLhd6DGXSTSYGS9iwUYUT1zkC7BWfTUqgWm0nPuzOWXU
CZR3tiMZiEK+WvqAaVLcmcSwE18u081ol06F8cCKF8xmMvANWJsRRYsI9vz9YNqr
CwsdlmMOoAbukg1O/zolkAT5Bv5lZz8yq7NZQn+/ZkBIKRr3/iP/lIl8+9Nlbu9l
o4VwYJ8ciVDiHIjy7/4lUU6l99QDLrYzKlnQD6SjHz/DodsOr2YAxXsbE4OIfRcN
vnmyhyVXhwg4HSKamIEyXxSuEF02QQzyr5RpmVIH8p3mywdskGtqSC1ew/0CzGMw
KH54AXbXAgMBAAECggEAM4SOPHJhHAYYcgrEIxOEstiRlMkDEI5xZ7cuHcE4EUfU
ZEyXXmKuewaiJcxqwh2bjUyFgM7rY4baT5TR+/sDxOlwNBbIrmY3CjK4A6K93RtA
Fmms5JEpW+n9uzvWlNJZD/QJZTB1xW53vEHKieWhCuibrWiFmdzDu9svVf3iN1zx
BLof/0xtLGo9bYbzJKA6cMC/3Q2orAht1R3l9F2kMt3QFe55k053U3AxFdpyRDZQ
OikEE2mzebFYSQCJrkY+t3rCFB69sOTIF35uMSVXW0CiWL31H2RbAWB+ELdr66G0
ArZ5v9CfyvocoD7vURvYkXCAelrWtwvhg/jnwOGYIQKBgQDkhCxsH+MgbJPHkxV6
y3Pkcr0tvfB8whSTMRRF++BvUY6koVl9xLaTnabGHa4NmOTmSg1EHsKcIlFIiKRm
64vtQjCzX1H6ZABmyx+cQFr+UVurrXKKu7vBiAsYUefJ0tm8/ggrll7zosR50/L1
LtqSemCZXd6iVLPuEh310ALDnwKBgQDZ56T+WMexyIWTlQInZGLaziEAhDw/Zj/f
00i8R8KxZJjCjlvfSwMiHhNqRLBrytJf2LH6wYb7D8qafQVCmcZHE5F7rbQeGuxZ
AWz2K5ghtLrPDmSouP8bMmcblDWakeVEgUGrVdzIPAi3Oe7v/rfbocCsafj0H1pu
zqjvGcXByQKBgG+YkK0ZAW1DOQQcsz+tfeJRmkttV7VFfpDHRhRLRjZ2yMdjOHXw
DA2YzuovcmGXiilgfowGzZk8NR/MAyVz4Hi0e14NrdYu4fdRORWwY/+QscjsQmS3
+6AulOSCk0R/oO/nywumOqaWlYa9WAgeooUoGGatbd0uqlQYKuNxevgXAoGARCTj
/UKoWJm75DZSMR18qK6TtYSlDrKcQRPjCDZs1Wr/NsCsTH054p6DNdV7UopgFec/
aYrB+puqoXt9fKF4V1vwQDxHOq7ywLboa2egsNHDJeN7aSRJayjtA7vqs4byquS9
M6arX9ceZqZwaY8/0iiYh5Kwby+q6UIppHRr2rkCgYAvf7A8TOmS83mdcIuatzbQ
J/U1PN3CjwoovCaOCm5NGwEHGVIdumkZW/X+AjwBGI8wQaIptvYhywxUbUa9AY3+
w88FBldYJC2ASpktfxEp2i2A691qFiY7B2CWYvSmjwGDlbz9eXD5rDVliAQvh5Ww
/EjxKvELyvRBoiIDqGPLpw==
-----END PRIVATE KEY-----
"""


#: The JWKS entry of each fixed key.
PUBLIC_JWKS = {
    "ES256": {
        "kid": "oKIywvGUpTVTyxMQ3bwIIeQUudfr_CkLMjCE19ECD-U",
        "alg": "ES256",
        "use": "sig",
        "crv": "P-256",
        "kty": "EC",
        # RFC 7515 A.3's public coordinates.
        "x": "f83OJ3D2xF1Bg8vub9tLe1gHMzV76e8Tus9uPHvRVEU",
        "y": "x_FEzRu9m36HLN_tue659LNpXW6pCyStikYjKIWI5a0",
    },
    "EdDSA": {
        # RFC 8037 A.3's thumbprint and A.1's public key.
        "kid": "kPrK_qmxVWaYVA9wwBF6Iuo3vVzz7TxHCTwXBygrS4k",
        "alg": "EdDSA",
        "use": "sig",
        "crv": "Ed25519",
        "kty": "OKP",
        "x": "11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo",
    },
    "RS256": {
        "kid": "10vbVSIFonRKj7vA3i5lLsb3Oeqar3jH412YsQXLNhI",
        "alg": "RS256",
        "use": "sig",
        "e": "AQAB",
        "kty": "RSA",
        "n": "woLQM3NxVNmDlfpeanorzsJyd2GK7A2Y6YC4Xegxl0k0mBkvYsFGFE9c5AuwVn01KoFptJz7szll1AmUd7YjGYhCvlr6gGlS3"
        "JnEsBNfLtPNaJdOhfHAihfMZjLwDVibEUWLCPb8_WDaqwsLHZZjDqAG7pINTv86JZAE-Qb-ZWc_MquzWUJ_v2ZASCka9_4j_5SJ"
        "fPvTZW7vZaOFcGCfHIlQ4hyI8u_-JVFOpffUAy62MypZ0A-kox8_w6HbDq9mAMV7GxODiH0XDb55soclV4cIOB0impiBMl8UrhBd"
        "NkEM8q-UaZlSB_Kd5ssHbJBrakgtXsP9AsxjMCh-eAF21w",
    },
}


def b64url_decode(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def b64url_encode(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def fixed_key(alg: str, created_at: int = FIXED_NOW - 3600) -> SigningKey:
    """The fixed key for `alg`, created an hour before the fixed clock."""
    if alg == "ES256":
        d = int.from_bytes(b64url_decode(RFC7515_A3_ES256_D), "big")
        private_key = ec.derive_private_key(d, ec.SECP256R1())
    elif alg == "EdDSA":
        private_key = ed25519.Ed25519PrivateKey.from_private_bytes(b64url_decode(RFC8037_A1_ED25519_D))
    else:
        private_key = load_pem_private_key(RS256_PEM, password=None)
    return signing_key_from_private(private_key, alg, created_at)


def forge(header: dict, claims: dict, sign=None) -> str:
    """A compact token with exactly this header and these claims; `sign` maps the signing input
    to signature bytes (no signature when None)."""
    signing_input = (
        b64url_encode(json.dumps(header, separators=(",", ":")).encode())
        + "."
        + b64url_encode(json.dumps(claims, separators=(",", ":")).encode())
    )
    signature = sign(signing_input.encode("ascii")) if sign else b""
    return signing_input + "." + b64url_encode(signature)
