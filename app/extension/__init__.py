"""Extension mode: agents drive the Chrome a person already uses, through a browser extension.

Two ways in. ``pinchtab bridge --extension`` (:mod:`.bridge`) serves the browser API as any
bridge does, its Browser running over a CDP relay the extension opens (:mod:`.relay`), paired by a
token (:mod:`.pairing`). ``pinchtab ext daemon`` (:mod:`.daemon`) speaks the original project's
protocols: the extension takes commands by polling (:mod:`.http`) or, ours, over one WebSocket
(:mod:`.channel`, on the bridge's extension port too); clients hand the daemon commands over a Unix
socket (:mod:`.socket_server`, :mod:`.client`, ``pinchtab ext <command>``); the queue between them,
with its deadlines, is pure logic (:mod:`.commands`). The original's extension and CLI work against
the daemon unchanged.
"""
