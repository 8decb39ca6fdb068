// The labels of a space's nodes without a caption, with how many of each.
MATCH (n {space: $space}) WHERE coalesce(n.caption, '') = ''
RETURN labels(n) AS labels, count(*) AS n
