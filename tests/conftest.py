"""Suite-wide settings: the one-line numba compile notice stays quiet here (tests that check
it turn it back on), and the slow files are marked for ``make test-fast`` to skip."""

import os

import pytest

os.environ.setdefault("CASTLE_ENVS_COMPILE_NOTICE", "0")

#: whole files and folders that build, install, train or run every Markdown block: the
#: full suite (``make test``) runs them, the edit-test loop (``make test-fast``) skips them
SLOW_PATHS = (
    "tests/notebooks/",
    "tests/training/",
    "tests/test_readme.py",
    "tests/test_docs_site.py",
    "tests/test_docs_scripts.py",
    "tests/test_packaging.py",
    "tests/experiments/test_ray_backend.py",
    "tests/experiments/test_exit_siege_net.py",
    "tests/experiments/test_demo.py",
)


def pytest_collection_modifyitems(config, items):
    root = config.rootpath
    for item in items:
        path = item.path.relative_to(root).as_posix()
        if path.startswith(SLOW_PATHS):
            item.add_marker(pytest.mark.slow)
