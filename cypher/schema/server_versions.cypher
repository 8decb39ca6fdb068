CALL dbms.components() YIELD name, versions
WITH versions[0] AS neo4j
RETURN neo4j, gds.version() AS gds
