"""The browser API's routes, one blueprint per family (see ``app.web.openapi`` for how they are declared)."""
