"""The threaded Chrome DevTools Protocol client: launcher, connection, tabs, snapshot, actions."""
