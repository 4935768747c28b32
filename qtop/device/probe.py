"""What probe.sh found on the device: identity, capabilities, sensors.

The probe prints tab-separated records; this module turns them into a
``ProbeResult`` without judging them. Choosing channels from it is
``qtop.device.sensors``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from qtop.device import units
from qtop.device.protocol import ProtocolError, split_fields
from qtop.errors import RunFailed

_VERSION = re.compile(r"v(\d+\.\d+\.\d+[0-9A-Za-z._]*)")


@dataclass(frozen=True, slots=True)
class TripFound:
    index: str
    type: str
    temp: str
    hyst: str


@dataclass(frozen=True, slots=True)
class ZoneFound:
    path: str
    type: str
    temp: str
    trips: tuple[TripFound, ...] = ()


@dataclass(frozen=True, slots=True)
class CoolingFound:
    path: str
    type: str
    max_state: str
    cur_state: str = ""


@dataclass(frozen=True, slots=True)
class SupplyFound:
    path: str
    name: str
    type: str
    files: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class OdpmFound:
    """An on-device power monitor (Android ODPM) with its rails, in ``energy_value`` order."""

    path: str
    name: str
    rails: tuple[str, ...]
    subsystems: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class PolicyFound:
    path: str
    name: str
    cur: str


@dataclass(frozen=True, slots=True)
class ProbeResult:
    root: str = "/"
    identity: dict[str, str] = field(default_factory=dict)
    qnn_lines: tuple[str, ...] = ()
    caps: dict[str, tuple[str, ...]] = field(default_factory=dict)
    zones: tuple[ZoneFound, ...] = ()
    cooling: tuple[CoolingFound, ...] = ()
    supplies: tuple[SupplyFound, ...] = ()
    policies: tuple[PolicyFound, ...] = ()
    meters: dict[str, str] = field(default_factory=dict)
    odpm: tuple[OdpmFound, ...] = ()
    errors: dict[str, str] = field(default_factory=dict)

    def has(self, cap: str) -> bool:
        return cap in self.caps

    @property
    def bash_path(self) -> str | None:
        """bash 5 or later (``$EPOCHREALTIME``), the agent's optional fast path."""
        bash = self.caps.get("bash")
        if not bash or len(bash) < 2:
            return None
        try:
            major = int(bash[1])
        except ValueError:
            return None
        return bash[0] if major >= 5 else None

    @property
    def arith_bits(self) -> int:
        """The width of ``sh``'s arithmetic: 64, or 32 for mksh (Android's sh)."""
        value = self.caps.get("arith", ("64",))[0]
        return 32 if value == "32" else 64

    @property
    def page_size(self) -> int:
        try:
            return int(self.caps.get("pagesize", ("4096",))[0])
        except ValueError:
            return 4096

    @property
    def clock_synced(self) -> bool | None:
        """Whether NTP has set the device's wall clock (None: the device cannot say)."""
        value = self.caps.get("clock_synced")
        return None if not value else value[0] == "yes"

    @property
    def spool(self) -> str | None:
        value = self.caps.get("spool")
        return value[0] if value else None

    @property
    def qnn_version(self) -> str | None:
        for line in self.qnn_lines:
            if line.lower().startswith("qnn-net-run pid"):
                continue
            match = _VERSION.search(line)
            if match:
                return match.group(1)
        return None


def parse_probe(text: str, host: str = "the device") -> ProbeResult:
    """Records of probe.sh's output; refuses output that stops before its end record."""
    identity: dict[str, str] = {}
    qnn: list[str] = []
    caps: dict[str, tuple[str, ...]] = {}
    zones: dict[str, ZoneFound] = {}
    trips: dict[str, list[TripFound]] = {}
    cooling: list[CoolingFound] = []
    supplies: list[SupplyFound] = []
    policies: list[PolicyFound] = []
    meters: dict[str, str] = {}
    errors: dict[str, str] = {}
    odpm: dict[str, tuple[str, list[str], dict[str, str]]] = {}
    root = "/"
    complete = False
    for line in text.splitlines():
        try:
            kind, *fields = split_fields(line)
        except ProtocolError:
            continue
        if kind == "end":
            complete = True
        elif kind == "root" and fields:
            root = fields[0]
        elif kind == "id" and len(fields) >= 2:
            if fields[0] == "qnn":
                qnn.append("\t".join(fields[1:]))
            else:
                identity[fields[0]] = "\t".join(fields[1:])
        elif kind == "cap" and fields:
            caps[fields[0]] = tuple(fields[1:])
        elif kind == "error" and fields:
            errors[fields[0]] = "\t".join(fields[1:])
        elif kind == "zone" and len(fields) >= 2:
            zones[fields[0]] = ZoneFound(fields[0], fields[1], _at(fields, 2))
        elif kind == "trip" and len(fields) >= 4:
            trips.setdefault(fields[0], []).append(
                TripFound(fields[1], fields[2], fields[3], _at(fields, 4))
            )
        elif kind == "cooling" and len(fields) >= 2:
            cooling.append(CoolingFound(fields[0], fields[1], _at(fields, 2), _at(fields, 3)))
        elif kind == "supply" and len(fields) >= 3:
            files = tuple(f for f in _at(fields, 3).split(",") if f)
            supplies.append(SupplyFound(fields[0], fields[1], fields[2], files))
        elif kind == "cpufreq" and len(fields) >= 2:
            policies.append(PolicyFound(fields[0], fields[1], _at(fields, 2)))
        elif kind == "meter" and fields:
            meters[fields[0]] = _at(fields, 1)
        elif kind == "odpm" and fields:
            odpm[fields[0]] = (_at(fields, 1), [], {})
        elif kind in ("odpm_line", "odpm_rail") and len(fields) >= 2 and fields[0] in odpm:
            _odpm_record(odpm[fields[0]], kind, "\t".join(fields[1:]))
    if not complete:
        raise RunFailed(
            f"{host}: the device probe stopped before its end (the shell or the link failed)",
            "check that the login shell of that account runs 'sh' and try again",
        )
    found_zones = tuple(
        ZoneFound(z.path, z.type, z.temp, tuple(trips.get(z.path, ()))) for z in zones.values()
    )
    return ProbeResult(
        root=root,
        identity=identity,
        qnn_lines=tuple(qnn),
        caps=caps,
        zones=found_zones,
        cooling=tuple(cooling),
        supplies=tuple(supplies),
        policies=tuple(policies),
        meters=meters,
        errors=errors,
        odpm=tuple(
            OdpmFound(path, name, tuple(rails), subsystems)
            for path, (name, rails, subsystems) in odpm.items()
            if rails
        ),
    )


def _odpm_record(found: tuple[str, list[str], dict[str, str]], kind: str, text: str) -> None:
    """A line of ``energy_value`` (a rail and its counter) or of ``enabled_rails``."""
    _, rails, subsystems = found
    if kind == "odpm_line":
        parsed = units.odpm_rail(text)
        if parsed is not None:
            rails.append(parsed[0])
        return
    # enabled_rails: "CH2[VSYS_PWR_RFFE]:Cellular" (Pixel 6 on) or "VSYS_PWR_RFFE:Cellular".
    rail, colon, subsystem = text.rpartition(":")
    if colon:
        subsystems[rail.split("[", 1)[-1].removesuffix("]")] = subsystem.strip()


def _at(fields: list[str], index: int) -> str:
    return fields[index] if index < len(fields) else ""
