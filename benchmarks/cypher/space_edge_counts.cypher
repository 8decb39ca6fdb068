// Relationship counts of one space for the ingest benchmark (benchmarks/perf.py).
CALL () { MATCH (:Entity {space: $space})-[r:CO_OCCURS]->() RETURN count(r) AS cooccurrences }
CALL () { MATCH (:Memory {space: $space})-[r:MENTIONS]->() RETURN count(r) AS mentions }
RETURN cooccurrences, mentions
