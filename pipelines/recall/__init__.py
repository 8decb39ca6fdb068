"""Recall (read path): pure algorithms for intent, query understanding, fusion, selection,
abstention and heat. No I/O here; the database layer feeds these functions."""
