// Range indexes for space scoping, time filters and the heat signal.
CREATE INDEX memory_space IF NOT EXISTS FOR (m:Memory) ON (m.space);
CREATE INDEX memory_space_time IF NOT EXISTS FOR (m:Memory) ON (m.space, m.event_time);
CREATE INDEX memory_space_heat IF NOT EXISTS FOR (m:Memory) ON (m.space, m.heat);
CREATE INDEX memory_space_stage IF NOT EXISTS FOR (m:Memory) ON (m.space, m.stage_id);
CREATE INDEX entity_space IF NOT EXISTS FOR (e:Entity) ON (e.space);
CREATE INDEX fact_space IF NOT EXISTS FOR (f:Fact) ON (f.space);
CREATE INDEX stage_space IF NOT EXISTS FOR (s:Stage) ON (s.space);
CREATE INDEX session_space IF NOT EXISTS FOR (s:Session) ON (s.space);
CREATE INDEX jobrun_space IF NOT EXISTS FOR (j:JobRun) ON (j.space, j.started_at)
