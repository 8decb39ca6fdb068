"""Mnemograph domain: ingest, recall, assemble, consolidate. No HTTP here."""
