"""A study config: loaded, validated against its schema, sweeps and builds expanded, then checked across
keys (names, prompts, sources); what its llama.cpp backends and chat templates mean."""
