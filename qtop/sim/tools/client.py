"""The simulated tools' executables: small bash scripts that start like native binaries.

Python starts in 25-90 ms, which would swamp the latencies qtop measures;
bash starts in about 1.5 ms and can talk TCP through ``/dev/tcp`` without
forking. Each script carries the service port and the token path, so it
works whatever environment the session has (sshd's ``SetEnv`` included).
"""

from __future__ import annotations

import shlex
from pathlib import Path

TOOLS = ("qnn-net-run", "qnn-profile-viewer", "genie-t2t-run")
# Genie must end its query and write its profile on SIGINT/SIGTERM (design.md §6);
# the other tools die from them like any process without a handler.
SIGNAL_FORWARDING_TOOLS = ("genie-t2t-run",)

_TEMPLATE = r"""#!/bin/bash
# @TOOL@ on the qtop simulated board: the work is done by the board's tool service.
qtop_sim_t0=$EPOCHREALTIME
exec 3<>/dev/tcp/127.0.0.1/@PORT@ || {
  printf '%s %s\n' '@TOOL@: the simulated board is not running' \
    '(no tool service on 127.0.0.1:@PORT@)' >&2
  exit 127
}
IFS= read -r qtop_sim_token < @TOKEN@
printf 'qtop-sim-tool/1\0%s\0@TOOL@\0%s\0%s\0%s\0%s\0%s\0%s\0' "$qtop_sim_token" "$$" \
  "$qtop_sim_t0" "$PWD" "${ADSP_LIBRARY_PATH-}" "${LD_LIBRARY_PATH-}" "$#" >&3
(($#)) && printf '%s\0' "$@" >&3
@TRAPS@
while :; do
  IFS= read -r -u 3 qtop_sim_frame
  case $? in 0) ;; 1) break ;; *) continue ;; esac
  case $qtop_sim_frame in
    o*) printf '%s\n' "${qtop_sim_frame:1}" ;;
    p*) printf '%s' "${qtop_sim_frame:1}" ;;
    e*) printf '%s\n' "${qtop_sim_frame:1}" >&2 ;;
    x*) exit "${qtop_sim_frame:1}" ;;
    R*) cat <&3; exit "${qtop_sim_frame:1}" ;;
  esac
done
printf '%s\n' '@TOOL@: lost the simulated board' >&2
exit 1
"""

_TRAPS = "trap 'printf \"sINT\\n\" >&3' INT\ntrap 'printf \"sTERM\\n\" >&3' TERM"


def tool_script(tool: str, port: int, token_path: Path) -> str:
    traps = _TRAPS if tool in SIGNAL_FORWARDING_TOOLS else ""
    return (
        _TEMPLATE.replace("@TOOL@", tool)
        .replace("@PORT@", str(port))
        .replace("@TOKEN@", shlex.quote(str(token_path)))
        .replace("@TRAPS@", traps)
    )


def install_tools(bin_dir: Path, port: int, token_path: Path) -> None:
    """Write every simulated tool into ``bin_dir`` (the first entry of the session PATH)."""
    bin_dir.mkdir(parents=True, exist_ok=True)
    for tool in TOOLS:
        path = bin_dir / tool
        temporary = path.with_name(f".{tool}.tmp")
        temporary.write_text(tool_script(tool, port, token_path))
        temporary.chmod(0o755)
        temporary.replace(path)
