"""``python -m depgraph`` runs the command line."""

from depgraph.cli import entry

entry()
