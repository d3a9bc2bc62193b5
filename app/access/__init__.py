"""Who may call: the bearer token, agent sessions, the web-origin policy, failed-attempt limits,
the local peer's user, and what a reverse proxy says about the client."""
