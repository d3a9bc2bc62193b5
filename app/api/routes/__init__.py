"""The browser API's routes, one blueprint per family (see ``app.web.openapi`` for how they are declared).

Each family's contract sits beside it: ``<family>.py`` holds the views, ``<family>_contract.py`` the
schemas of what they take and answer; what several families share is ``app.api.contract``. Views
return data, and their ``@bp.response`` schema dumps it (raw Responses only for what is not JSON).
"""
