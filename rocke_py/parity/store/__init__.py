"""What the harness keeps on disk: the state directory, bounded file reading and writing, and
the object and output caches."""
