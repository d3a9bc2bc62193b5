"""Server mode's own routes (instances, profiles, events, dashboard) and the proxy to instances."""
