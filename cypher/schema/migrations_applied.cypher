MATCH (m:SchemaMigration) RETURN m.name AS name, m.checksum AS checksum
