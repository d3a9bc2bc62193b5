"""Who may call: the bearer token, the routes open to all, agent sessions (and their routes), the
store of the tokens we hand out, the web-origin policy, failed-attempt limits, the local peer's
user, and what a reverse proxy says about the client."""
