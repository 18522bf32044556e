"""Suite-wide settings: the one-line numba compile notice stays quiet here (tests that check
it turn it back on)."""

import os

os.environ.setdefault("CASTLE_ENVS_COMPILE_NOTICE", "0")
