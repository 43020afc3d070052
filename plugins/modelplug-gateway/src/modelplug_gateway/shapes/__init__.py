"""The API shapes the gateway speaks: each turns a caller's body into a neutral Request
and the Client's events back into that API's answer (see :mod:`.base`)."""
