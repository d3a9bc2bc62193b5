"""Extension mode: agents drive the Chrome a person already uses, through a browser extension.

The extension polls a daemon for commands (:mod:`.http`); clients hand the daemon commands over a
Unix socket (:mod:`.socket_server`); the queue between them, with its deadlines, is pure logic
(:mod:`.commands`). Both protocols are the original project's, so its extension and its CLI work
against ``pinchtab ext daemon`` unchanged (``reference/extension-protocol.md``).
"""
