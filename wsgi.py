"""For a plain ``gunicorn wsgi:app`` (one worker, gthread; see deploy notes in the README)."""
from app import create_app

app = create_app()
