"""Checkout service settings."""

REQUEST_TIMEOUT_MS = 3000
RETRY_ATTEMPTS = 2
UPSTREAM = "payments.internal:8443"
