"""What turns samples into answers: latency statistics, thermal decay, energy, comparisons.

Everything here is a pure function of the event stream (``session.analyze``),
so a live session, its replay and ``qtop report`` give the same figures.
``docs/analysis.md`` defines each figure with its formula.
"""
