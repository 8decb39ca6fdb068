// A supersession as written before migration 0008: no valid_from, no recorded_at.
MATCH ({space: $space})-[r:SUPERSEDES {id: $id}]->({space: $space})
REMOVE r.valid_from, r.recorded_at
RETURN r.id AS id
