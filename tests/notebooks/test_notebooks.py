"""Every notebook in notebooks/ runs top to bottom at the small size, and is stored stripped.

The kernel is this interpreter (a kernelspec written to a temporary folder, so a stale
``python3`` kernel elsewhere on the machine cannot be picked up instead); the notebooks
read ``CASTLE_ENVS_NB_SIZE=small`` in their first cell. Needs the ``notebooks`` extra
(nbclient, nbformat, ipykernel, matplotlib); skipped without it.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

nbformat = pytest.importorskip("nbformat")
nbclient = pytest.importorskip("nbclient")
pytest.importorskip("ipykernel")
pytest.importorskip("matplotlib")

from jupyter_client.kernelspec import KernelSpecManager  # noqa: E402  (after the skips)
from jupyter_client.manager import KernelManager  # noqa: E402

NB_DIR = Path(__file__).resolve().parents[2] / "notebooks"
NOTEBOOKS = sorted(NB_DIR.glob("*.ipynb"))
KERNEL = "castle-envs-test"


def test_the_five_notebooks_are_there():
    assert [p.name[:3] for p in NOTEBOOKS] == ["01_", "02_", "03_", "04_", "05_"]


@pytest.fixture(scope="module")
def kernel_dir(tmp_path_factory):
    root = tmp_path_factory.mktemp("kernels")
    spec = root / KERNEL
    spec.mkdir()
    (spec / "kernel.json").write_text(
        json.dumps(
            {
                "argv": [sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}"],
                "display_name": "castle-envs (test)",
                "language": "python",
            }
        )
    )
    return str(root)


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_notebook_is_stored_stripped(path):
    nb = nbformat.read(path, as_version=4)
    for cell in nb.cells:
        if cell.cell_type == "code":
            assert cell.outputs == [] and cell.execution_count is None, (
                f"{path.name}: outputs not stripped (see notebooks/README.md)"
            )


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_notebook_reads_the_size_parameter_first(path):
    nb = nbformat.read(path, as_version=4)
    first_code = next(c for c in nb.cells if c.cell_type == "code")
    assert "CASTLE_ENVS_NB_SIZE" in first_code.source


# Notebooks 02 and 05 prefer saved results and shipped runs when the checkout has them; the
# "fresh" cases point them at an empty folder so the fallback runs whatever is on disk.
CASES = [(p, None) for p in NOTEBOOKS] + [
    (p, var)
    for p in NOTEBOOKS
    for prefix, var in (("02_", "CASTLE_ENVS_NB_RESULTS"), ("05_", "CASTLE_ENVS_NB_RUNS"))
    if p.name.startswith(prefix)
]


@pytest.mark.parametrize(
    "path,empty_var", CASES, ids=[p.stem + ("-fresh" if v else "") for p, v in CASES]
)
def test_notebook_runs_at_small_size(path, empty_var, kernel_dir, tmp_path, monkeypatch):
    # the kernel inherits this environment: small size, one thread per library, no GUI
    if path.name.startswith("05_"):  # reads TensorBoard logs; trains when no run is found
        for module in ("sb3_contrib", "tensorboard", "yaml"):
            pytest.importorskip(module)
    monkeypatch.setenv("CASTLE_ENVS_NB_SIZE", "small")
    if empty_var:
        monkeypatch.setenv(empty_var, str(tmp_path))
    monkeypatch.setenv("MPLBACKEND", "module://matplotlib_inline.backend_inline")
    for var in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS"):
        monkeypatch.setenv(var, "1")
    nb = nbformat.read(path, as_version=4)
    km = KernelManager(
        kernel_name=KERNEL, kernel_spec_manager=KernelSpecManager(kernel_dirs=[kernel_dir])
    )
    client = nbclient.NotebookClient(
        nb, km=km, timeout=180, resources={"metadata": {"path": str(NB_DIR)}}
    )
    client.execute()  # raises CellExecutionError on any error
    images = sum(
        "image/png" in o.get("data", {})
        for c in nb.cells
        if c.cell_type == "code"
        for o in c.outputs
    )
    assert images >= 2, f"{path.name} drew {images} pictures"
