"""The process kit: what a long-running process of ours needs beside its app. A signal queue (the
handler only queues; the main loop acts), a JSON-lines Unix socket server (the manager's control
socket, the extension daemon's), and a small threaded HTTP server living beside other work in one
process (``pinchtab debug connect``, the extension port)."""
