"""Per-inference latency and Genie figures from parsed profiler output.

qnn-net-run prints no per-inference latency (formats.md §4): with
``--num_inferences N`` the only per-inference figures are the ``Execute Stat``
blocks of its profiling log. Genie's figures per query come from its
``--profile`` JSON. These functions turn a ``ParsedProfile`` into those
figures; the live session places them on the timeline.
"""

from __future__ import annotations

from dataclasses import dataclass

from qtop.profiling.model import Execute, ParsedProfile, metric_key, time_metric_us

# The QNN execute call as the application sees it is the inference latency;
# the narrower roots are fallbacks for files that lack it.
EXECUTE_LATENCY_METRICS: tuple[str, ...] = tuple(
    metric_key(name)
    for name in (
        "QNN (execute) time",
        "RPC (execute) time",
        "QNN accelerator (execute) time",
        "Accelerator (execute) time",
    )
)


@dataclass(frozen=True, slots=True)
class ExecuteLatency:
    """One execute's latency and the root metric it was read from."""

    graph: str
    index: int
    latency_s: float
    metric: str


def execute_latency(execute: Execute) -> tuple[float, str] | None:
    """The latency of one execute in seconds, with the metric used, or None.

    A negative time is damage, not a latency: the next metric is tried instead.
    """
    for key in EXECUTE_LATENCY_METRICS:
        microseconds = time_metric_us(execute.metrics, key)
        if microseconds is not None and microseconds >= 0:
            return microseconds / 1e6, key
    return None


def execute_latencies(profile: ParsedProfile) -> list[ExecuteLatency]:
    """Every execute with a usable latency, in the order they ran (execute numbers are global)."""
    found: list[ExecuteLatency] = []
    for graph in profile.graphs:
        for execute in graph.executes:
            latency = execute_latency(execute)
            if latency is not None:
                found.append(ExecuteLatency(graph.name, execute.index, latency[0], latency[1]))
    found.sort(key=lambda item: item.index)
    return found


@dataclass(frozen=True, slots=True)
class GenieFigures:
    """One Genie query: its latency and the rates an LLM engineer reads."""

    latency_s: float
    ttft_s: float | None
    prefill_tok_s: float | None
    decode_tok_s: float | None
    prompt_tokens: float | None
    generated_tokens: float | None
    complete: bool

    def metrics(self) -> dict[str, float]:
        """The figures as an iteration's ``metrics`` (absent ones left out)."""
        named = {
            "ttft_s": self.ttft_s,
            "prefill_tok_s": self.prefill_tok_s,
            "decode_tok_s": self.decode_tok_s,
            "prompt_tokens": self.prompt_tokens,
            "generated_tokens": self.generated_tokens,
        }
        return {name: float(value) for name, value in named.items() if value is not None}


def genie_figures(profile: ParsedProfile) -> list[GenieFigures]:
    """The figures of each query; latency is TTFT plus generation time (or the event span)."""
    figures: list[GenieFigures] = []
    for query in profile.queries:
        ttft_us = _time(query.time_us("time-to-first-token"))
        generation_us = _time(query.time_us("token-generation-time"))
        duration_us = _time(query.time_us("duration"))
        if ttft_us is not None and generation_us is not None:
            latency_us = ttft_us + generation_us
        elif duration_us is not None:
            latency_us = duration_us
        elif ttft_us is not None:
            latency_us = ttft_us
        else:
            continue
        figures.append(
            GenieFigures(
                latency_s=latency_us / 1e6,
                ttft_s=None if ttft_us is None else ttft_us / 1e6,
                prefill_tok_s=_number(query.value("prompt-processing-rate")),
                decode_tok_s=_number(query.value("token-generation-rate")),
                prompt_tokens=_number(query.value("num-prompt-tokens")),
                generated_tokens=_number(query.value("num-generated-tokens")),
                complete=query.complete,
            )
        )
    return figures


def _time(microseconds: float | None) -> float | None:
    """A time that can be one: negative ones are damage, read as absent."""
    return microseconds if microseconds is not None and microseconds >= 0 else None


def _number(value: float | int | None) -> float | None:
    return None if value is None else float(value)
