// Any memory text of any space: what an anonymous client must not be able to read.
MATCH (m:Memory) RETURN m.text LIMIT 1
