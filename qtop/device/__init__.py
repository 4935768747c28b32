"""The device side: the agent scripts (``agent/*.sh``), the line protocol they
speak, sensor discovery and units, and the operations that launch, follow and
stop a run. docs/device-protocol.md describes what runs on the device."""
