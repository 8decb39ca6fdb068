// One supersession by id (memory- or fact-level), scoped to the space.
MATCH (new {space: $space})-[r:SUPERSEDES {id: $id}]->(old {space: $space})
RETURN r {.id, .kind, .reason, .by, .rule, .attribute, .old_value, .new_value, .prior_status,
          .fact_ids, .created_newer, at: toString(r.at)} AS supersession,
       new.id AS newer, old.id AS older, old.status AS older_status
