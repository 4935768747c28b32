"""Live figures for Prometheus: ``qtop run/demo --metrics-listen HOST:PORT``.

``address`` checks where the endpoint may listen; ``server`` runs
prometheus_client's HTTP server with a collector that, on each scrape, copies
the live ``SessionModel`` on the session's loop (``capture``) and turns the
copy into metric families (``families``, ``physical``) with bounded label
values (``labels``, ``scope``). Only ``server`` and the families need
prometheus_client (the ``metrics`` extra); importing this package does not.
"""
