"""The link under faults, against the simulated board: python bench/link_faults.py

Prints how long a silent drop (a TCP proxy that stops forwarding, no FIN or
RST) takes to be noticed with keepalives every 0.5 s and 2 unanswered, and
how long until the stream resumes, over several drops. The accuracy of wall
latency is bench/latency_accuracy.py (against the command's own clock, not
the simulator's).
"""

from __future__ import annotations

import asyncio
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from link.proxy import SilentDropProxy

from qtop.events import Iteration, Link
from qtop.live.backoff import Backoff
from qtop.live.source import LiveSource
from qtop.profiles import load_profile_text
from qtop.sim import start_sim
from qtop.transport.ssh import SSHTarget, SSHTransport

NETRUN = (
    "qnn-net-run --backend libQnnHtp.so --retrieve_context "
    '"$QTOP_SIM_ROOT/data/local/tmp/prismml/prismml_w8a8_seq64.bin" '
    '--input_list "$QTOP_SIM_ROOT/data/local/tmp/prismml/inputs.txt" --num_inferences {n}'
)


def profile(sim, port: int, known_hosts: str, run: str, extra: str = ""):
    o = sim.device_overrides()
    return load_profile_text(
        f"name: bench\ndevice: {{host: {o['host']}, port: {port}, user: {o['user']}, "
        f"identity_file: '{o['identity_file']}', known_hosts: '{known_hosts}', "
        f"sysfs_root: $QTOP_SIM_SYSFS, spool_dir: '{o['spool_dir']}', sample_interval: 100ms"
        f"{extra}}}\nrun: {run}\n"
    )


async def silent_drops(drops: int) -> tuple[list[float], list[float]]:
    with tempfile.TemporaryDirectory() as tmp:
        async with start_sim(Path(tmp) / "sim", variant="evk", time_scale=10) as sim:
            proxy = SilentDropProxy(sim.host, sim.port)
            port = await proxy.start()
            known = Path(tmp) / "known_hosts"
            known.write_text(sim.known_hosts_path.read_text().replace(f"]:{sim.port}", f"]:{port}"))
            run = "{command: '" + NETRUN.format(n=5) + "', warmup: 0, iterations: 400}"
            used = profile(sim, port, str(known), run,
                           ", keepalive_interval: 500ms, keepalive_count_max: 2")  # fmt: skip
            source = LiveSource(used, SSHTransport(SSHTarget.from_profile(used.device)),
                                backoff=Backoff(0.2, 1.0))  # fmt: skip
            await source.start()
            detect, resume = [], []
            silenced = None
            iterations_since = 0
            async for event in source.events():
                if isinstance(event, Iteration):
                    iterations_since += 1
                    if silenced is None and iterations_since >= 20 and len(detect) < drops:
                        silenced = time.monotonic()
                        proxy.go_silent()
                if isinstance(event, Link) and event.state == "disconnected" and silenced:
                    detect.append(time.monotonic() - silenced)
                if isinstance(event, Link) and event.state == "reconnected" and silenced:
                    resume.append(time.monotonic() - silenced)
                    silenced, iterations_since = None, 0
                    if len(resume) == drops:
                        await source.stop_run()
            await source.close()
            await proxy.close()
            return detect, resume


def main() -> None:
    detect, resume = asyncio.run(silent_drops(5))
    print("silent drop, keepalive 0.5 s x 2:")
    print(f"  noticed after   {', '.join(f'{d:.2f}' for d in detect)} s")
    print(f"  resumed after   {', '.join(f'{r:.2f}' for r in resume)} s")


if __name__ == "__main__":
    main()
