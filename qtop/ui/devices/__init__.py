"""The combined view: several devices (a side-by-side run, or a set of recordings) at once.

One column per device with its latency (P50/P95/P99 and a chart), power and energy
per inference, hottest zone and throttling state, link and progress. Each column
draws from its device's own ``Session``; the single-device dashboard is unchanged.
"""
