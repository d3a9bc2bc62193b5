"""Server mode's own routes (instances, profiles, events, dashboard), each family's contract beside
it (``<family>_contract.py``), and the proxy to instances."""
