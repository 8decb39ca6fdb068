"""Mnemograph domain: ingest, recall, assemble, consolidate. No HTTP here."""

import os

# Idle OpenMP threads (PyTorch's batch encoders) sleep instead of spinning: a spinning thread
# takes a core from Neo4j and the read path. Read when the runtime loads: before torch is.
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
