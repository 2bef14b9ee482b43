"""The five test-class DAGs' shared shape (factory), steps and class-specific probes."""
