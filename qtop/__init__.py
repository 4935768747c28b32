"""qtop: a terminal monitor for on-device inference runs on Qualcomm edge boards."""

import warnings

__version__ = "0.1.0"

# asyncssh imports cryptography's DSA classes at import time, and cryptography 51
# deprecates DSA with a warning per name: five warnings of a library's internals on
# every command that opens a link. qtop never offers or accepts a DSA key, so the
# warning tells a user nothing; only that message, only from asyncssh, is silenced.
warnings.filterwarnings("ignore", message="DSA is deprecated", module=r"asyncssh(\.|$)")
