"""For ``gunicorn -c deploy/gunicorn.conf.py wsgi:app`` (one gthread worker; see the README's deployment notes)."""
from app.api import create_app

app = create_app()
