SHOW INDEXES YIELD name, type, state, populationPercent, labelsOrTypes, properties, options
WHERE type IN ['VECTOR', 'FULLTEXT', 'RANGE']
RETURN name, type, state, populationPercent, labelsOrTypes, properties,
       options.indexConfig.`vector.dimensions` AS dimensions
ORDER BY name
