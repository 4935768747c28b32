"""A sustained run over SSH heats the NSP past its trip, throttles, slows; idling recovers."""

from __future__ import annotations

import asyncio
from pathlib import Path

import asyncssh

from qtop.sim import read_ground_truth, start_sim

from .helpers import fixed_config

HANG_GUARD_S = 60.0
READ_STATE = (
    'read s < "$QTOP_SIM_SYSFS/class/thermal/cooling_device2/cur_state"; '
    'read t < "$QTOP_SIM_SYSFS/class/thermal/thermal_zone11/temp"; echo "$s $t"'
)


async def test_a_sustained_run_throttles_and_cooling_recovers(tmp_path: Path) -> None:
    # time_scale 300: one wall second is five thermal minutes; latency is not scaled.
    async with start_sim(tmp_path / "state", config=fixed_config("evk"), time_scale=300) as sim:
        async with asyncssh.connect(
            sim.host,
            port=sim.port,
            username=sim.username,
            client_keys=[str(sim.client_key_path)],
            known_hosts=str(sim.known_hosts_path),
        ) as conn:
            run = await conn.run(
                "qnn-net-run --backend libQnnHtp.so --retrieve_context_list "
                "$QTOP_SIM_ROOT/tmp/optrace-blog/ctx_list.yaml --duration 0.9 "
                "--output_dir $HOME/out >/dev/null"
            )
            assert run.exit_status == 0, run.stderr
            # Idle, the board cools and the governor steps back down; the loop waits for
            # that (about 0.7 s here when idle), with a generous hang guard for a busy machine.
            deadline = asyncio.get_running_loop().time() + HANG_GUARD_S
            while True:
                cool_state, cool_temp = map(int, (await conn.run(READ_STATE)).stdout.split())
                if cool_state == 0 and cool_temp < 60000:
                    break
                assert asyncio.get_running_loop().time() < deadline, (cool_state, cool_temp)
                await asyncio.sleep(0.1)
        (record,) = read_ground_truth(sim.ground_truth_path)

    states, latencies, temps = record["cdsp_state"], record["latencies_us"], record["nsp_temp_c"]
    onset = next(i for i, state in enumerate(states) if state > 0)
    assert states[0] == 0 and max(states) >= 2
    # The governor steps up only at a poll that saw the trip (tests/sim/test_physics.py);
    # an execute's snapshot comes after the physics step that held the poll, and how far
    # the zone has moved since depends on how late this machine ran that step. What holds
    # at any load: the zone heated from idle to the onset.
    assert temps[0] < temps[onset]
    # Before the onset every execute is the model's cool median; after it, 8 % per cdsp step.
    assert set(latencies[:onset]) == {2271}
    assert all(
        lat == round(2271 * (1 + 0.08 * s)) for lat, s in zip(latencies, states, strict=True)
    )
    assert max(latencies) > 2271 * 1.15
    assert max(temps) * 1000 > 60000 > cool_temp
