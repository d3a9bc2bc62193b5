"""The browser API's routes, one blueprint per family (see ``app.openapi`` for how they are declared)."""
