MATCH (s:Space {id: $space}) DETACH DELETE s RETURN count(*) AS deleted
