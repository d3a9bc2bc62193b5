"""The socket layer: what every long-lived connection we serve shares, in one place.

A WebSocket or an event stream holds one of the server's request threads for as long as it lasts,
so they are served one way: :mod:`.served` is the loop of a WebSocket we serve (frames in with a
deadline, bounded in size, a close with a reason from any thread), :mod:`.limiter` the cap every
WebSocket and event stream takes a place under (503 past it, all ended at shutdown), and
:mod:`.upstream` the relay of a caller's WebSocket to the same WebSocket on another server of ours
(server mode's debug and screencast sockets). Which pages may open any of them is the web-origin
policy's (``app.access.web_origin``), judged in front of every route before an upgrade.

This package knows no entry: the debug bridge, the screencast, the extension's relay and channel
and server mode's relays import it, never the other way round.
"""
