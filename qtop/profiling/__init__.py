"""The profiler result model (``model``) and the wait breakdown over executes (``aggregate``)."""
