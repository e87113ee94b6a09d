"""Public building blocks: one step of a stage run alone (the int8 variants the export stage chooses from,
the synthetic-STS requests, the training datasets, models scored on a suite), for scripts and benchmarks
that measure one component. Each is a thin wrapper over the stage's own code, so what is measured is what
a run does."""
