// Replace Neo4j's initial password of the connected user (run on the system database by
// neo4j_runtime.auth when authentication is turned on for a database created without it).
ALTER CURRENT USER SET PASSWORD FROM $old TO $new
