"""Human baselines (HUME): seeded task subsets, annotation sheets, human scores in mteb's result format."""
