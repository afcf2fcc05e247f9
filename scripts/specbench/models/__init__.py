"""Models: a pinned Hugging Face snapshot (snapshot), conversion with the pinned converter and quantization (convert),
and inspecting and checking a GGUF (verify)."""
