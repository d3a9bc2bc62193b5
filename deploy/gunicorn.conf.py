"""For ``gunicorn -c deploy/gunicorn.conf.py wsgi:app`` (what ``pinchtab bridge`` sets itself).

One worker: every tab and the browser connection live in that process. gthread: its heartbeat
runs apart from requests, so a long navigate is not a hung worker. No preload: the browser
starts in the worker, not in the master.
"""
bind = "127.0.0.1:9867"
workers = 1
worker_class = "app.worker.Worker"  # gthread, keeping a thread on a busy connection (app/worker.py)
threads = 32
timeout = 120
graceful_timeout = 10
keepalive = 5
preload_app = False
