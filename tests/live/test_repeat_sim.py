"""run.repeat with a profiler-driven latency source, over SSH against the simulated board."""

import json

from qtop.cli import main
from qtop.profiles.model import Variant
from qtop.sim import start_sim

from .sim_runs import iterations, run_profile, shipped


async def test_each_repetition_of_each_variant_measures_its_own_inferences(tmp_path, capsys):
    async with start_sim(tmp_path / "sim", variant="evk", time_scale=20, seed=5) as sim:
        base = shipped("sim-evk", sim)
        fast = base.run.command + " --perf_profile high_performance"
        profile = shipped(
            "sim-evk",
            sim,
            warmup=2,
            iterations=30,
            repeat=2,
            cooldown=None,
            variants=(
                Variant(name="default", command=base.run.command),
                Variant(name="hp", command=fast),
            ),
        )
        path = tmp_path / "run.jsonl"
        events = await run_profile(profile, path)
    got = iterations(events)
    measured = [i["variant"] for i in got if i["phase"] == "measure"]
    assert measured == [name for name in ("default#1", "hp#1", "default#2", "hp#2")
                        for _ in range(30)]  # fmt: skip
    assert events[-1]["reason"] == "completed"
    # The simulator's high_performance mode is 0.97 of the default latency.
    assert main(["compare", f"{path}:default", f"{path}:hp", "--format", "json"]) == 0
    (variant,) = json.loads(capsys.readouterr().out)["variants"]
    assert (variant["base_repetitions"], variant["new_repetitions"]) == (2, 2)
    assert -0.06 < variant["deltas"][0]["change"] < 0.0
