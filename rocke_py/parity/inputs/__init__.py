"""What a run is asked to do: the configs, the change a run covers, -k expressions, shards."""
