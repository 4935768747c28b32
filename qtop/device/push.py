"""Copying a run's payload to the device (``run.push``), skipping what is already there.

Each ``{from, to}`` becomes a list of files with their device paths, sizes
and hashes (SHA-256 and MD5, computed in one pass). One ``sh -s`` on the
device says, per file, whether it is missing, of another size, or its hash
(``sha256sum`` where the device has it, else ``md5sum``: toybox, busybox and
coreutils all have one); only the files that differ are copied, over the
transport's own channel (SFTP, ``adb push``) or, without one, through the
shell. Nothing on the device is deleted.
"""

from __future__ import annotations

import asyncio
import hashlib
import os
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from qtop.errors import RunFailed, UsageError
from qtop.profiles import Profile, PushItem
from qtop.transport.base import Transport
from qtop.transport.command import join
from qtop.transport.upload import Uploader, UploadUnavailable, copy_through_shell

PUSH_TIMEOUT_S = 600.0
# Files per device check: far below any command-line limit.
CHECK_BATCH = 200
_UNSAFE_NAME = re.compile(r"[\x00-\x1f\x7f]")
_HASH_BLOCK = 1024 * 1024

CHECK_SCRIPT = r"""
qtop_algo=
for qtop_c in sha256sum md5sum; do
	if command -v "$qtop_c" >/dev/null 2>&1; then
		qtop_algo=$qtop_c
		break
	fi
done
printf 'algo\t%s\n' "$qtop_algo"
qtop_i=0
while [ "$#" -ge 2 ]; do
	qtop_size=$1
	qtop_path=$2
	shift 2
	if [ -f "$qtop_path" ]; then
		qtop_have=$(stat -c %s "$qtop_path" 2>/dev/null) || qtop_have=$(wc -c <"$qtop_path")
		qtop_have=${qtop_have##* }
		if [ "$qtop_have" = "$qtop_size" ] && [ -n "$qtop_algo" ]; then
			qtop_sum=$("$qtop_algo" <"$qtop_path")
			printf 'hash\t%s\t%s\n' "$qtop_i" "${qtop_sum%% *}"
		else
			printf 'size\t%s\t%s\n' "$qtop_i" "$qtop_have"
		fi
	elif [ -e "$qtop_path" ]; then
		printf 'other\t%s\n' "$qtop_i"
	else
		printf 'missing\t%s\n' "$qtop_i"
	fi
	qtop_i=$((qtop_i + 1))
done
printf 'end\n'
"""


@dataclass(frozen=True, slots=True)
class PushFile:
    local: Path
    remote: str
    size: int
    sha256: str
    md5: str

    def digest(self, algorithm: str) -> str:
        return self.sha256 if algorithm == "sha256sum" else self.md5


@dataclass(slots=True)
class PushOutcome:
    copied: list[PushFile] = field(default_factory=list)
    skipped: list[PushFile] = field(default_factory=list)
    algorithm: str = ""
    method: str = ""

    def summary(self) -> str:
        copied = sum(f.size for f in self.copied)
        text = (
            f"push: {len(self.copied)} file(s) copied ({_size(copied)}"
            f"{', ' + self.method if self.copied else ''}), {len(self.skipped)} already on the "
            "device"
        )
        if not self.algorithm:
            text += " (the device has neither sha256sum nor md5sum: every file was copied)"
        else:
            text += f" (compared by size and {self.algorithm.removesuffix('sum')})"
        return text


def _size(count: int) -> str:
    for unit, scale in (("GB", 1e9), ("MB", 1e6), ("kB", 1e3)):
        if count >= scale:
            return f"{count / scale:.1f} {unit}"
    return f"{count} B"


def _hashes(path: Path) -> tuple[int, str, str]:
    sha256, md5, size = hashlib.sha256(), hashlib.md5(usedforsecurity=False), 0
    with path.open("rb") as handle:
        while block := handle.read(_HASH_BLOCK):
            sha256.update(block)
            md5.update(block)
            size += len(block)
    return size, sha256.hexdigest(), md5.hexdigest()


def _check_name(item: PushItem, relative: str) -> None:
    if _UNSAFE_NAME.search(relative):
        raise UsageError(
            f"run.push: {item.source!r} holds a file whose name has a control character "
            f"({relative!r}); no device shell could name it safely",
            "rename the file, or push a directory without it",
        )


def _files_of(item: PushItem, base: Path) -> Iterator[tuple[Path, str]]:
    source = Path(os.path.expanduser(item.source))
    if not source.is_absolute():
        source = base / source
    if source.is_dir():
        target = item.to.rstrip("/") or "/"
        for directory, subdirectories, names in os.walk(source):
            subdirectories.sort()
            for name in sorted(names):
                path = Path(directory) / name
                if not path.is_file():
                    continue
                relative = path.relative_to(source).as_posix()
                _check_name(item, relative)
                yield path, str(PurePosixPath(target) / relative)
        return
    if not source.is_file():
        raise UsageError(
            f"run.push: {item.source!r}: no such file or directory (looked for {source})",
            "a relative 'from' is taken from the profile's directory; fix the path",
        )
    _check_name(item, source.name)
    remote = item.to + source.name if item.to.endswith("/") else item.to
    yield source, remote


def plan_push(items: Sequence[PushItem], base: Path) -> list[PushFile]:
    """Every file to push with its device path, size and hashes (reads each file once)."""
    seen: dict[str, PushFile] = {}
    for item in items:
        for local, remote in _files_of(item, base):
            size, sha256, md5 = _hashes(local)
            pushed = PushFile(local, remote, size, sha256, md5)
            earlier = seen.get(remote)
            if earlier is not None and earlier.sha256 != sha256:
                raise UsageError(
                    f"run.push: {earlier.local} and {local} would both be copied to {remote}",
                    "give them different 'to' paths",
                )
            seen[remote] = pushed
    return list(seen.values())


def profile_base(profile: Profile) -> Path:
    """The directory a relative ``from`` is taken from: the profile file's own."""
    source = Path(profile.source) if profile.source else Path(".")
    return source.parent if source.suffix in (".yaml", ".yml") else Path(".")


async def _compare(transport: Transport, files: list[PushFile]) -> tuple[str, list[PushFile]]:
    """The device's hash tool and the files whose copy there differs."""
    algorithm, differ = "", []
    for start in range(0, len(files), CHECK_BATCH):
        batch = files[start : start + CHECK_BATCH]
        arguments = [word for f in batch for word in (str(f.size), f.remote)]
        result = await transport.run(
            join(["sh", "-s", "--", *arguments]),
            stdin=CHECK_SCRIPT.encode(),
            timeout=PUSH_TIMEOUT_S,
        )
        answers: dict[int, tuple[str, str]] = {}
        ended = False
        for line in result.text.splitlines():
            fields = line.split("\t")
            if fields[0] == "algo" and len(fields) == 2:
                algorithm = fields[1] if fields[1] in ("sha256sum", "md5sum") else ""
            elif fields[0] == "end":
                ended = True
            elif len(fields) >= 2 and fields[1].isdigit():
                answers[int(fields[1])] = (fields[0], fields[2] if len(fields) > 2 else "")
        if not ended:
            raise RunFailed(
                "push: the device did not finish checking its copies: "
                f"{result.error_text or f'exit status {result.exit_status}'}"
            )
        for index, pushed in enumerate(batch):
            kind, value = answers.get(index, ("missing", ""))
            if kind == "other":
                raise RunFailed(
                    f"push: {pushed.remote} exists on the device and is not a file",
                    "remove it there, or push to another path",
                )
            if kind != "hash" or value.lower() != pushed.digest(algorithm):
                differ.append(pushed)
    return algorithm, differ


async def _make_directories(transport: Transport, files: list[PushFile]) -> None:
    directories = sorted({str(PurePosixPath(f.remote).parent) for f in files})
    result = await transport.run(join(["mkdir", "-p", *directories]), timeout=PUSH_TIMEOUT_S)
    if result.exit_status != 0:
        raise RunFailed(
            f"push: cannot create {', '.join(directories)} on the device: {result.error_text}",
            "check that 'to' is under a directory the device user can write "
            "(on Android: /data/local/tmp)",
        )


async def push(transport: Transport, profile: Profile) -> PushOutcome | None:
    """Bring the device's copy of ``run.push`` up to date; None when there is nothing to push."""
    if not profile.run.push:
        return None
    files = await asyncio.to_thread(plan_push, profile.run.push, profile_base(profile))
    outcome = PushOutcome()
    if not files:
        return outcome
    outcome.algorithm, differ = await _compare(transport, files)
    outcome.skipped = [f for f in files if f not in differ]
    if not differ:
        return outcome
    await _make_directories(transport, differ)
    pairs = [(f.local, f.remote) for f in differ]
    if isinstance(transport, Uploader):
        try:
            await transport.upload(pairs)
            outcome.method = {"ssh": "SFTP", "adb": "adb push"}.get(transport.kind, "upload")
        except UploadUnavailable:
            outcome.method = ""
    if not outcome.method:
        for local, remote in pairs:
            await copy_through_shell(transport, local, remote)
        outcome.method = "through the shell"
    outcome.copied = differ
    return outcome
