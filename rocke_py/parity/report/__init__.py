"""What a run tells: the terminal summary, --json and --junit, failure groups, Markdown, the merge of shards."""
