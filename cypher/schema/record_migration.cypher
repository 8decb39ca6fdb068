MERGE (m:SchemaMigration {name: $name})
SET m.checksum = $checksum, m.applied_at = datetime(), m.caption = 'migration ' + $name
