// Stage parameters and a heat snapshot. `heat` and `last_access` (the lazily decayed base that
// readers and the access path own) are never written here, so nothing is decayed twice.
UNWIND $rows AS r
MATCH (m:Memory {space: $space, id: r.id})
WHERE m.status = 'active'
SET m.consolidation_stage = r.stage, m.decay_rate = r.decay_rate, m.heat_floor = r.heat_floor,
    m.heat_current = r.heat_current, m.heat_current_at = $now
RETURN count(m) AS updated
