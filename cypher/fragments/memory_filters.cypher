// The request's filters on a memory `m` (pipelines.recall.steps.candidate_query.filter_params):
// its time range, roles, speakers (lower case), kinds, stages (ids and labels), sessions, tags
// and the ids it excludes; a null parameter filters nothing. Included, after a first WHERE
// predicate, by every statement that reads recall candidates.
AND ($time_from IS NULL OR m.event_time >= $time_from)
AND ($time_to IS NULL OR m.event_time <= $time_to)
AND ($roles IS NULL OR m.role IN $roles)
AND ($speakers IS NULL OR toLower(m.speaker) IN $speakers)
AND ($kinds IS NULL OR m.kind IN $kinds)
AND ($stages IS NULL OR m.stage_id IN $stages)
AND ($sessions IS NULL OR m.session_id IN $sessions)
AND ($tags IS NULL OR any(t IN coalesce(m.tags, []) WHERE t IN $tags))
AND NOT m.id IN $exclude_ids
