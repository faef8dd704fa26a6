"""The declared write and read pipelines: the stage tables and their runner, the loops, invariants and repair."""
