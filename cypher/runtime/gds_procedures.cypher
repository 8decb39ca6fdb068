CALL gds.list() YIELD name RETURN count(*) AS n
