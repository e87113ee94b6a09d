"""``python -m skadapt`` (also what ``torchrun -m skadapt train RECIPE`` runs on each rank)."""

from skadapt.cli import app

app()
