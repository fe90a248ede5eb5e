"""Running the engines of the tree under review: the engine pair, the worker pool, the tree's identity."""
