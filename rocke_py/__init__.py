"""rocke-parity: a Python and a C99 kernel emitter kept byte-identical by a gate."""
