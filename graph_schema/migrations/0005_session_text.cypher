// Session documents: each conversation session keeps the texts of its memories as one
// LIST<STRING> property (`texts`, see pipelines.session_documents) and its full-text space tag,
// indexed here so recall can rank whole sessions by BM25 (a session that covers the query's
// words across several turns outranks one that matches a single turn). Existing sessions get
// their documents from the data step that follows this file (graph_schema).
CREATE FULLTEXT INDEX session_text IF NOT EXISTS FOR (s:Session) ON EACH [s.texts, s.space_tag]
OPTIONS {indexConfig: {`fulltext.analyzer`: 'english', `fulltext.eventually_consistent`: false}}
