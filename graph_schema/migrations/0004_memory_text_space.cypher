// The full-text index also indexes each memory's `space_tag` (a hash token of its space, see
// pipelines.spaces.fulltext_tag), so a recall restricts Lucene to its own space instead of
// post-filtering a global top-N: a large space can no longer crowd a small one out of it.
// Existing memories get their tag from the data step that follows this file (graph_schema).
DROP INDEX memory_text IF EXISTS;
CREATE FULLTEXT INDEX memory_text IF NOT EXISTS FOR (m:Memory) ON EACH [m.text, m.space_tag]
OPTIONS {indexConfig: {`fulltext.analyzer`: 'english', `fulltext.eventually_consistent`: false}}
