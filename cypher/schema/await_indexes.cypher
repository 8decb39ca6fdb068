CALL db.awaitIndexes($seconds)
