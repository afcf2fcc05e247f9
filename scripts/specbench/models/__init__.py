"""Models: a pinned Hugging Face snapshot (hub), conversion with the pinned converter and quantization (convert),
and inspecting and checking a GGUF (verify)."""
