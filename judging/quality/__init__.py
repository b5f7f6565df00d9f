"""Judge quality: signals of attention (and, later, gold pairs, drift and canaries)."""
