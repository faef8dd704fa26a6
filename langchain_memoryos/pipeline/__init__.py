"""The declared write and read pipelines: effects and their drivers, the stage tables, invariants and repair."""
