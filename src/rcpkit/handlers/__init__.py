"""RCP handlers: adapt engines (the persistent engine, its graph, the keyword engine) to an App."""
