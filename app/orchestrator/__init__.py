"""Server mode's process side: the manager that owns every instance, and the worker's way to it.

* :mod:`.manager`: ``python -m app.orchestrator.manager``, the process that spawns, watches,
  restarts and stops ``pinchtab bridge`` children and publishes lifecycle events; its main loop
  (signals, reaping, restarts) is :mod:`.supervisor`, launching and health polling :mod:`.launch`.
* :mod:`.spawn`: the gunicorn master's handle on that process.
* :mod:`.control` (the operations, declared once), :mod:`.client` and :mod:`.protocol`: JSON lines
  over a Unix socket in ``<stateDir>/run``.
* :mod:`.mirror`: the worker's copy of the instance table, for routing without a round trip.
* :mod:`.instances`, :mod:`.ports`, :mod:`.children`: records, the restart policy, ports, pidfiles.
"""
