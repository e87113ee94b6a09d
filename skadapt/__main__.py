"""``python -m skadapt`` (also what ``torchrun -m skadapt train RECIPE`` runs on each rank)."""

from skadapt.cli import app

if __name__ == "__main__":  # spawned worker processes import this module as __mp_main__: no second CLI run
    app()
