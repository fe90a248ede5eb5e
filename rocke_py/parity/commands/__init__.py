"""The commands behind the parser: gate, golden, diff, new, gaps."""
