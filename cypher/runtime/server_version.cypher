CALL dbms.components() YIELD versions RETURN versions[0] AS v
