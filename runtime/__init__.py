"""Executors (sequential reference, pattern fill, stage fill) over backends (python, cpu, cuda)."""
