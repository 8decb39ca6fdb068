RETURN gds.version() AS v
