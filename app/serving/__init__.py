"""The processes that serve our apps: gunicorn's worker and its own answers, the bridge's gunicorn
application, and the small in-process servers."""
