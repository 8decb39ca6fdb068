// Uniqueness of ids. Every node carries its space; ids are unique within a space.
CREATE CONSTRAINT space_id IF NOT EXISTS FOR (s:Space) REQUIRE s.id IS UNIQUE;
CREATE CONSTRAINT memory_key IF NOT EXISTS FOR (m:Memory) REQUIRE (m.space, m.id) IS UNIQUE;
CREATE CONSTRAINT session_key IF NOT EXISTS FOR (s:Session) REQUIRE (s.space, s.id) IS UNIQUE;
CREATE CONSTRAINT entity_key IF NOT EXISTS FOR (e:Entity) REQUIRE (e.space, e.key) IS UNIQUE;
CREATE CONSTRAINT stage_key IF NOT EXISTS FOR (s:Stage) REQUIRE (s.space, s.id) IS UNIQUE;
CREATE CONSTRAINT fact_key IF NOT EXISTS FOR (f:Fact) REQUIRE (f.space, f.id) IS UNIQUE;
CREATE CONSTRAINT schema_key IF NOT EXISTS FOR (s:Schema) REQUIRE (s.space, s.id) IS UNIQUE;
CREATE CONSTRAINT jobrun_id IF NOT EXISTS FOR (j:JobRun) REQUIRE j.id IS UNIQUE;
CREATE CONSTRAINT lease_key IF NOT EXISTS FOR (l:Lease) REQUIRE (l.space, l.job) IS UNIQUE;
CREATE CONSTRAINT migration_name IF NOT EXISTS FOR (m:SchemaMigration) REQUIRE m.name IS UNIQUE
