"""skadapt."""
